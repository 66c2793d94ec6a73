import {
  createConfiguration,
  IsomorphicFetchHttpLibrary,
  ResponseContext,
  SelfDecodingBody,
  ServerConfiguration,
  setHeaderMiddleware,
  wrapHttpLibrary,
  type ApiConstructor,
  type ApiType,
  type HttpLibrary,
  type KubeConfig,
  type RequestContext,
  type SecurityAuthentication,
} from '@kubernetes/client-node';
import { request, type Dispatcher } from 'undici';

const fetchLibrary = new IsomorphicFetchHttpLibrary();

/**
 * Sends the generated clients' requests with undici's `request` instead of its `fetch`.
 * `fetch` (WHATWG streams, Request/Response objects) cost about 1 ms of CPU per call, a
 * third of the dispatcher's CPU per dispatch; `request` is the same client and connection
 * pool without that layer. JSON and text bodies only — what the dispatcher sends; a form body
 * goes through client-node's own `fetch` library.
 */
export const undiciRequestLibrary: HttpLibrary = wrapHttpLibrary({
  async send(context: RequestContext): Promise<ResponseContext> {
    const body = context.getBody();
    if (body !== undefined && typeof body !== 'string') {
      return fetchLibrary.send(context).toPromise();
    }
    const signal = context.getSignal();
    const dispatcher = context.getDispatcher();
    const response = await request(context.getUrl(), {
      method: context.getHttpMethod(),
      headers: context.getHeaders(),
      ...(body === undefined ? {} : { body }),
      ...(signal === undefined ? {} : { signal }),
      ...(dispatcher === undefined ? {} : { dispatcher }),
    });
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(response.headers)) {
      if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    // Read at once: the connection goes back to the pool, and every caller parses the body.
    const data = Buffer.from(await response.body.arrayBuffer());
    return new ResponseContext(
      response.statusCode,
      headers,
      new SelfDecodingBody(Promise.resolve(data)),
    );
  },
});

/**
 * API clients of one KubeConfig that share one connection pool.
 *
 * `KubeConfig.makeApiClient` of client-node 2.x builds a new undici Agent for every request
 * when the cluster has TLS settings (a CA, a client certificate, `skipTLSVerify`): a new TCP
 * and TLS connection per API call, and an idle socket left behind by each. Here the agent of
 * the first request is kept and given to every later one (keep-alive); the KubeConfig still
 * authenticates each request (bearer token files are re-read, exec plugins refreshed).
 * Requests go through `undiciRequestLibrary`.
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
        httpApi: undiciRequestLibrary,
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
