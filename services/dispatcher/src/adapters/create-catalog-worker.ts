import { KubeConfig } from '@kubernetes/client-node';
import { RestCatalog, restCatalogOptions } from '@icepack/iceberg';
import {
  catalogAccessProblems,
  isLocalCatalog,
  propertyValueProblem,
  SecretResolutionError,
  secretResolver,
} from '@icepack/runtime';
import type { CatalogAccessPolicy, Logger, SecretResolver } from '@icepack/runtime';
import { parseSparkMemoryBytes, type Binding, type Catalog } from '@icepack/types';
import type { Redis } from 'ioredis';
import type { BatchLimits } from '../domain/batch.ts';
import type { ResidentSettings } from '../domain/resident-session.ts';
import type { LaunchGate } from '../domain/launch-gate.ts';
import { LocalRunner } from '../runners/local-runner.ts';
import { SparkOperatorRunner } from '../runners/spark-operator-runner.ts';
import type { SparkRunner } from '../runners/spark-runner.ts';
import type { CatalogWorker } from './binding-registry.ts';
import type { DispatchMetrics } from './dispatch-metrics.ts';
import { KubeQuota } from './kube-quota.ts';
import { LocalBudgetQuota, type QuotaGate } from './quota.ts';
import { QuotaUsePublisher } from './quota-use-publisher.ts';
import { LearnedSizingStore } from './sizing-store.ts';
import { CatalogTableHealth } from './table-health.ts';
import type { DispatchSink } from './task-events.ts';
import { TaskWorker } from './task-worker.ts';

export interface CatalogWorkerDeps {
  readonly redis: Redis;
  readonly sink: DispatchSink;
  readonly logger: Logger;
  readonly stateDir: string;
  readonly sparkJars?: string;
  /** Local runner: names a job inherits beyond the allow-list (`ICEPACK_LOCAL_JOB_ENV`). */
  readonly localJobEnv?: readonly string[];
  readonly sparkImage: string;
  /** How long the operator keeps a finished SparkApplication. */
  readonly sparkAppTtlMs: number;
  readonly sparkSecret?: string;
  readonly maxAttempts: number;
  readonly backoffMs: number;
  readonly timeoutMs: number;
  readonly quotaWaitMs: number;
  /** Batched runs (ADR 0027): their bounds; none: every task runs alone. */
  readonly batch?: BatchLimits;
  /**
   * A resident session per catalog (ADR 0045): local runner only — the spark-operator runner
   * has no `appendToBatch` and runs one application per batch. None: off.
   */
  readonly resident?: ResidentSettings;
  /** Learned sizing (ADR 0026): on or off, and how often the model is fitted again. */
  readonly sizing?: { readonly learned: boolean; readonly refreshMs: number };
  /** How the figures read reaches the catalog: local catalogs, secret sources. */
  readonly figures: FiguresAccess;
  /** The process's launch gate, shared by its catalog workers (ADR 0040). Default none. */
  readonly launchGate?: LaunchGate;
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

/** What the figures read may use to reach a catalog (the scanner's settings). */
export interface FiguresAccess {
  /** Catalogs whose `file:` locations may be read here (`ICEPACK_LOCAL_CATALOGS`). */
  readonly localCatalogs: readonly string[];
  /** Where `catalog.auth` secrets may come from (`ICEPACK_SECRET_ENV_PREFIX`, `…_SECRETS_DIR`). */
  readonly policy: CatalogAccessPolicy;
  /** Default: the process environment and files, within `policy`. */
  readonly resolveSecret?: SecretResolver;
  /** Per catalog request. Default 30 s. */
  readonly timeoutMs?: number;
}

/**
 * The REST client the worker reads its before/after figures with: the catalog's URI,
 * warehouse, properties and auth (bearer or OAuth2, secrets resolved here) exactly as the
 * scanner builds it (`restCatalogOptions`), after the same access check, which the storage
 * properties of the catalog's answers pass too. `file:` locations are read only for catalogs
 * configured as local (docs/security.md).
 */
export function figuresCatalog(catalog: Catalog, access: FiguresAccess): RestCatalog {
  const refused = catalogAccessProblems(catalog, access.policy);
  if (refused.length > 0) {
    throw new SecretResolutionError(
      `catalog ${catalog.name} refused: ${refused.map((p) => `${p.path}: ${p.message}`).join('; ')}`,
    );
  }
  return new RestCatalog(
    restCatalogOptions(
      catalog,
      access.resolveSecret ?? secretResolver(process.env, access.policy),
      {
        timeoutMs: access.timeoutMs ?? 30_000,
        localFiles: isLocalCatalog(catalog.name, access.localCatalogs),
        answerPropertyProblem: (value) => propertyValueProblem(value, access.policy),
      },
    ),
  );
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
      ...(deps.localJobEnv === undefined ? {} : { jobEnv: deps.localJobEnv }),
      // The job's catalog credential comes from the same allow-listed sources as the figures'.
      resolveSecret: deps.figures.resolveSecret ?? secretResolver(process.env, deps.figures.policy),
    });
    quota = new LocalBudgetQuota({ redis: deps.redis });
  }
  // Built at the first read: a secret that cannot be resolved fails that read (logged as
  // "table figures not read", naming the field), not the worker.
  let rest: RestCatalog | undefined;
  const figures = (): RestCatalog => (rest ??= figuresCatalog(catalog, deps.figures));
  const { metrics } = deps;
  // Samples are recorded even when learning is off, so switching it on starts from data.
  const sizingModel = new LearnedSizingStore({
    redis: deps.redis,
    catalog: catalog.name,
    logger: deps.logger,
    enabled: deps.sizing?.learned ?? true,
    ...(deps.sizing === undefined ? {} : { refreshMs: deps.sizing.refreshMs }),
    groupHeapPerCore:
      parseSparkMemoryBytes(binding.spark.executorMemory) / binding.spark.executorCores,
  });
  const worker = new TaskWorker({
    sizingModel,
    binding,
    connection: deps.redis,
    runner: metrics?.runner(runner) ?? runner,
    quota,
    sink: metrics?.sink(deps.sink) ?? deps.sink,
    health: new CatalogTableHealth(figures),
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
    ...(deps.batch === undefined ? {} : { batch: deps.batch }),
    ...(deps.resident === undefined ? {} : { resident: deps.resident }),
    ...(deps.launchGate === undefined ? {} : { launchGate: deps.launchGate }),
    ...(metrics === undefined
      ? {}
      : {
          onDispatched: (latencyMs, task) => metrics.dispatched(latencyMs, task),
          onWait: (kind, task) => metrics.waited(kind, task),
        }),
  });
  const watched = metrics?.worker(binding, worker) ?? worker;
  // The group's quota use for the console's overview (the planner has no Kubernetes right).
  const quotaUse = new QuotaUsePublisher({
    redis: deps.redis,
    quota,
    binding,
    logger: deps.logger,
  });
  return {
    start: async () => {
      sizingModel.start();
      await watched.start();
      quotaUse.start();
    },
    close: async () => {
      quotaUse.stop();
      sizingModel.stop();
      await watched.close();
      rest?.close(); // its S3 clients
    },
  };
}
