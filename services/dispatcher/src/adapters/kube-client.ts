import {
  createConfiguration,
  ServerConfiguration,
  setHeaderMiddleware,
  type ApiConstructor,
  type ApiType,
  type KubeConfig,
  type RequestContext,
  type SecurityAuthentication,
} from '@kubernetes/client-node';

type Dispatcher = NonNullable<ReturnType<RequestContext['getDispatcher']>>;

/**
 * API clients of one KubeConfig that share one connection pool.
 *
 * `KubeConfig.makeApiClient` of client-node 2.x builds a new undici Agent for every request
 * when the cluster has TLS settings (a CA, a client certificate, `skipTLSVerify`): a new TCP
 * and TLS connection per API call, and an idle socket left behind by each. Here the agent of
 * the first request is kept and given to every later one (keep-alive); the KubeConfig still
 * authenticates each request (bearer token files are re-read, exec plugins refreshed).
 */
export class KubeClients {
  readonly #kubeConfig: KubeConfig;
  #dispatcher: Dispatcher | undefined;

  constructor(kubeConfig: KubeConfig) {
    this.#kubeConfig = kubeConfig;
  }

  make<T extends ApiType>(type: ApiConstructor<T>): T {
    const cluster = this.#kubeConfig.getCurrentCluster();
    if (cluster === null) throw new Error('KubeConfig: no current cluster');
    const auth: SecurityAuthentication = {
      getName: () => 'kubeconfig, shared connections',
      applySecurityAuthentication: async (context) => {
        await this.#kubeConfig.applySecurityAuthentication(context);
        // The agent just made for this request has no connection yet: drop it for the shared one.
        this.#dispatcher ??= context.getDispatcher();
        if (this.#dispatcher !== undefined) context.setDispatcher(this.#dispatcher);
      },
    };
    return new type(
      createConfiguration({
        baseServer: new ServerConfiguration(cluster.server, {}),
        authMethods: { default: auth },
        middleware: [setHeaderMiddleware('User-Agent', 'icepack-dispatcher')],
      }),
    );
  }
}

const shared = new WeakMap<KubeConfig, KubeClients>();

/** The `KubeClients` of a KubeConfig: every client made from one config shares its pool. */
export function kubeClients(kubeConfig: KubeConfig): KubeClients {
  let clients = shared.get(kubeConfig);
  if (clients === undefined) {
    clients = new KubeClients(kubeConfig);
    shared.set(kubeConfig, clients);
  }
  return clients;
}
