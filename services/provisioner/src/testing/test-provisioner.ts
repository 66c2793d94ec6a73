import { randomUUID } from 'node:crypto';
import {
  createHttpServer,
  createLogger,
  createRedisConnection,
  EnvelopeProducer,
  KafkaClient,
  requireBearerToken,
} from '@icepack/runtime';
import type { CatalogAccessPolicy, RedisConnection } from '@icepack/runtime';
import type { InfraEnv } from '@icepack/test';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Meter } from '@opentelemetry/api';
import { catalogProbe } from '../adapters/catalog-probe.ts';
import type { CatalogProbe } from '../adapters/catalog-probe.ts';
import type { ClusterPort } from '../adapters/cluster-port.ts';
import { KubeCluster } from '../adapters/kube-cluster.ts';
import { loadKubeConfig } from '../adapters/kube-config.ts';
import { KafkaPublisher } from '../adapters/publisher.ts';
import { RedisStore } from '../adapters/redis-store.ts';
import { BullmqTaskActivity } from '../adapters/task-activity.ts';
import type { TaskActivity } from '../adapters/task-activity.ts';
import { openApiDocument } from '../api/openapi.ts';
import type { Clock } from '../app/clock.ts';
import type { Bootstrap } from '../domain/bootstrap-file.ts';
import { createProvisioner } from '../provisioner.ts';
import type { Provisioner } from '../provisioner.ts';

/** The API's error body: 400 adds `fields`, a capacity 422 the figures. */
export interface ApiError {
  readonly error: string;
  readonly message: string;
  readonly fields?: readonly { readonly path: string; readonly message: string }[];
  readonly [figure: string]: unknown;
}

export const TEST_TOKEN = 'provisioner-test-token-0123456789';
export const TEST_INSTALLATION = 'icepack-test';

export interface TestProvisionerOptions {
  readonly infra: InfraEnv;
  /** The API server and credentials (kubernetes mode); or `kubeUrl` + `kubeToken`; or `cluster`. */
  readonly kubeConfig?: KubeConfig;
  /** Fake API server URL (kubernetes mode). */
  readonly kubeUrl?: string;
  readonly kubeToken?: string;
  /** ICEPACK_INSTALLATION_ID; default `TEST_INSTALLATION`. */
  readonly installation?: string;
  readonly cluster?: ClusterPort;
  /** Redis key prefix; default a fresh one, so tests never see each other's state. */
  readonly prefix?: string;
  readonly activity?: TaskActivity;
  readonly probe?: CatalogProbe;
  /** Allowed secret sources and catalog addresses (the probe's too). Default the runtime's default. */
  readonly access?: CatalogAccessPolicy;
  readonly clock?: Clock;
  readonly drainTimeoutMs?: number;
  readonly reconcileIntervalMs?: number;
  readonly bootstrap?: Bootstrap;
  /** Run `start()` (bootstrap + first reconcile). Default true. */
  readonly start?: boolean;
  /** Where the reconcile metrics go (`InMemoryMetrics`). Default none. */
  readonly meter?: Meter;
}

export interface TestProvisioner {
  readonly url: string;
  readonly prefix: string;
  readonly provisioner: Provisioner;
  readonly redis: RedisConnection;
  /** `fetch` against the API with the test token (JSON in and out); `T` is what the caller expects back. */
  api<T = ApiError>(
    method: string,
    path: string,
    body?: unknown,
    token?: string | null,
  ): Promise<{ status: number; body: T }>;
  stop(): Promise<void>;
}

/**
 * The provisioner in this process, wired like `main.ts` to the real Redis and Kafka and to a
 * Kubernetes API server (the real local control plane, or the fake one for faults the real one
 * cannot produce), behind a real HTTP server on an ephemeral port.
 */
export async function startTestProvisioner(
  options: TestProvisionerOptions,
): Promise<TestProvisioner> {
  const prefix = options.prefix ?? `icepack-test:${randomUUID()}`;
  const logger = createLogger({ service: 'provisioner-test', level: 'warn' });
  const kafka = new KafkaClient({
    brokers: options.infra.kafkaBrokers,
    clientId: 'provisioner-test',
    logger,
  });
  const producer = new EnvelopeProducer(kafka);
  await producer.connect();
  const redis = createRedisConnection(options.infra.redisUrl, { role: 'client', logger });
  const cluster =
    options.cluster ??
    new KubeCluster(
      options.kubeConfig ?? loadKubeConfig(options.kubeUrl, options.kubeToken),
      options.installation ?? TEST_INSTALLATION,
    );
  const provisioner = createProvisioner({
    store: new RedisStore(redis.redis, prefix),
    cluster,
    publisher: new KafkaPublisher(producer),
    activity: options.activity ?? new BullmqTaskActivity(redis.redis),
    probe:
      options.probe ??
      catalogProbe({
        timeoutMs: 2_000,
        ...(options.access === undefined ? {} : { policy: options.access }),
      }),
    ...(options.access === undefined ? {} : { access: options.access }),
    logger,
    drainPollMs: 100,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.drainTimeoutMs === undefined ? {} : { drainTimeoutMs: options.drainTimeoutMs }),
    reconcileIntervalMs: options.reconcileIntervalMs ?? 3_600_000,
    ...(options.bootstrap === undefined ? {} : { bootstrap: options.bootstrap }),
    ...(options.meter === undefined ? {} : { meter: options.meter }),
  });
  const http = createHttpServer({ port: 0, host: '127.0.0.1', logger });
  const openApi = openApiDocument();
  http.app.get('/v1/openapi.json', (_req, res) => {
    res.json(openApi);
  });
  http.app.use('/v1', requireBearerToken(TEST_TOKEN), provisioner.router);
  await http.listen();
  if (options.start ?? true) await provisioner.start();
  const url = `http://127.0.0.1:${http.port}`;
  return {
    url,
    prefix,
    provisioner,
    redis,
    async api<T>(method: string, path: string, body?: unknown, token: string | null = TEST_TOKEN) {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: {
          ...(token === null ? {} : { authorization: `Bearer ${token}` }),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      return { status: response.status, body: (text === '' ? undefined : JSON.parse(text)) as T };
    },
    async stop() {
      await provisioner.stop();
      await http.close();
      await producer.disconnect();
      await kafka.close();
      await redis.close();
    },
  };
}
