import { KubeConfig } from '@kubernetes/client-node';
import { RestCatalog } from '@icepack/iceberg';
import { isLocalCatalog } from '@icepack/runtime';
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
  /** Catalogs whose `file:` locations may be read here (`ICEPACK_LOCAL_CATALOGS`). Default none. */
  readonly localCatalogs?: readonly string[];
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

/**
 * The REST client the worker reads its before/after figures with. `file:` locations are read
 * only for catalogs configured as local, as in the scanner (docs/security.md). Catalog auth
 * for this read is not mapped yet (bearer/OAuth2 come with the REST client; issue 20): the
 * local stack's catalog needs none.
 */
export function figuresCatalog(catalog: Catalog, localCatalogs: readonly string[]): RestCatalog {
  return new RestCatalog({
    name: catalog.name,
    uri: catalog.uri,
    ...(catalog.warehouse === undefined ? {} : { warehouse: catalog.warehouse }),
    localFiles: isLocalCatalog(catalog.name, localCatalogs),
  });
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
  const rest = figuresCatalog(catalog, deps.localCatalogs ?? []);
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
