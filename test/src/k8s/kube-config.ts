import { KubeConfig } from '@kubernetes/client-node';

/** A KubeConfig whose only cluster is `url` (plain HTTP), with an optional bearer token. */
export function kubeConfigFor(url: string, token?: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'fake', server: url, skipTLSVerify: true }],
    users: [{ name: 'fake', ...(token === undefined ? {} : { token }) }],
    contexts: [{ name: 'fake', cluster: 'fake', user: 'fake', namespace: 'default' }],
    currentContext: 'fake',
  });
  return kc;
}
