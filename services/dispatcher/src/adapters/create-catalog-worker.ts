import { KubeConfig } from '@kubernetes/client-node';
import { RestCatalog } from '@icepack/iceberg';
import type { Logger } from '@icepack/runtime';
import type { Binding, Catalog } from '@icepack/types';
import type { Redis } from 'ioredis';
import { LocalRunner } from '../runners/local-runner.ts';
import { SparkOperatorRunner } from '../runners/spark-operator-runner.ts';
import type { SparkRunner } from '../runners/spark-runner.ts';
import type { CatalogWorker } from './binding-registry.ts';
import type { DispatchMetrics } from './dispatch-metrics.ts';
import { KubeQuota } from './kube-quota.ts';
import { LocalBudgetQuota, type QuotaGate } from './quota.ts';
import { CatalogTableHealth } from './table-health.ts';
import type { DispatchSink } from './task-events.ts';
import { TaskWorker } from './task-worker.ts';

export interface CatalogWorkerDeps {
  readonly redis: Redis;
  readonly sink: DispatchSink;
  readonly logger: Logger;
  readonly stateDir: string;
  readonly sparkJars?: string;
  readonly sparkImage: string;
  /** How long the operator keeps a finished SparkApplication. */
  readonly sparkAppTtlMs: number;
  readonly sparkSecret?: string;
  readonly maxAttempts: number;
  readonly backoffMs: number;
  readonly timeoutMs: number;
  readonly quotaWaitMs: number;
  /** Records the worker's runs and task events. Default none. */
  readonly metrics?: DispatchMetrics;
}

let kubeConfig: KubeConfig | undefined;
/** In-cluster service account, else KUBECONFIG / ~/.kube/config; loaded once, when needed. */
function kube(): KubeConfig {
  if (kubeConfig === undefined) {
    kubeConfig = new KubeConfig();
    kubeConfig.loadFromDefault();
  }
  return kubeConfig;
}

/** The worker of one bound catalog, with the runner and quota gate its binding names. */
export function createCatalogWorker(
  binding: Binding,
  catalog: Catalog,
  deps: CatalogWorkerDeps,
): CatalogWorker {
  let runner: SparkRunner;
  let quota: QuotaGate;
  if (binding.runner === 'spark-operator') {
    runner = new SparkOperatorRunner({
      kubeConfig: kube(),
      image: deps.sparkImage,
      timeToLiveSeconds: Math.round(deps.sparkAppTtlMs / 1000),
      ...(deps.sparkSecret === undefined ? {} : { secretName: deps.sparkSecret }),
    });
    quota = new KubeQuota(kube());
  } else {
    runner = new LocalRunner({
      stateDir: deps.stateDir,
      ...(deps.sparkJars === undefined ? {} : { sparkJars: deps.sparkJars }),
    });
    quota = new LocalBudgetQuota({ redis: deps.redis });
  }
  // Catalog auth for the figures read: bearer/OAuth2 come with the REST client (follow-up:
  // map catalog.auth here); the local stack's catalog needs none.
  const rest = new RestCatalog({
    name: catalog.name,
    uri: catalog.uri,
    ...(catalog.warehouse === undefined ? {} : { warehouse: catalog.warehouse }),
  });
  const { metrics } = deps;
  const worker = new TaskWorker({
    binding,
    connection: deps.redis,
    runner: metrics?.runner(runner) ?? runner,
    quota,
    sink: metrics?.sink(deps.sink) ?? deps.sink,
    health: new CatalogTableHealth(() => rest),
    catalog: {
      name: catalog.name,
      uri: catalog.uri,
      ...(catalog.warehouse === undefined ? {} : { warehouse: catalog.warehouse }),
      auth: catalog.auth,
      properties: catalog.properties,
    },
    logger: deps.logger.child({ catalog: catalog.name }),
    maxAttempts: deps.maxAttempts,
    backoffMs: deps.backoffMs,
    timeoutMs: deps.timeoutMs,
    quotaWaitMs: deps.quotaWaitMs,
    ...(metrics === undefined
      ? {}
      : { onDispatched: (latencyMs, task) => metrics.dispatched(latencyMs, task) }),
  });
  return metrics?.worker(binding, worker) ?? worker;
}
