import { KubeConfig } from '@kubernetes/client-node';

/**
 * The API server to talk to: an explicit URL (+ token), else the in-cluster service
 * account or `KUBECONFIG`/`~/.kube/config`, as `kubectl` would find them.
 */
export function loadKubeConfig(apiUrl?: string, token?: string): KubeConfig {
  const kc = new KubeConfig();
  if (apiUrl === undefined) {
    kc.loadFromDefault();
    return kc;
  }
  kc.loadFromOptions({
    // client-node 2.x refuses plain http unless TLS checks are off; an http URL has no TLS to check.
    clusters: [{ name: 'icepack', server: apiUrl, skipTLSVerify: apiUrl.startsWith('http:') }],
    users: [{ name: 'icepack', ...(token === undefined ? {} : { token }) }],
    contexts: [{ name: 'icepack', cluster: 'icepack', user: 'icepack' }],
    currentContext: 'icepack',
  });
  return kc;
}
