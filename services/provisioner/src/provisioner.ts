import type { Meter } from '@opentelemetry/api';
import type { Router } from 'express';
import { defaultCatalogAccessPolicy } from '@icepack/runtime';
import type { CatalogAccessPolicy, Logger, SparkSettingsPolicy } from '@icepack/runtime';
import type { CatalogProbe } from './adapters/catalog-probe.ts';
import type { ClusterPort } from './adapters/cluster-port.ts';
import { ProvisionerMetrics } from './adapters/provisioner-metrics.ts';
import type { Publisher } from './adapters/publisher.ts';
import type { RedisStore } from './adapters/redis-store.ts';
import type { TaskActivity } from './adapters/task-activity.ts';
import { apiRouter } from './api/api-router.ts';
import { applyBootstrap } from './app/apply-bootstrap.ts';
import { CatalogService } from './app/catalog-service.ts';
import type { Clock } from './app/clock.ts';
import { systemClock } from './app/clock.ts';
import { GroupService } from './app/group-service.ts';
import { Reconciler } from './app/reconciler.ts';
import type { Bootstrap } from './domain/bootstrap-file.ts';

export interface ProvisionerOptions {
  readonly store: RedisStore;
  readonly cluster: ClusterPort;
  readonly publisher: Publisher;
  readonly activity: TaskActivity;
  readonly probe: CatalogProbe;
  readonly logger: Logger;
  /** Allowed secret sources and catalog addresses. Default {@link defaultCatalogAccessPolicy}. */
  readonly access?: CatalogAccessPolicy;
  /** Allowed group sparkConf keys and image registries. Default the runtime's default. */
  readonly sparkPolicy?: SparkSettingsPolicy;
  /** Default the system clock. */
  readonly clock?: Clock;
  /** Time between reconcile passes. Default 60 000 ms. */
  readonly reconcileIntervalMs?: number;
  /** How long a deletion waits for running tasks before cancelling them. Default 30 min. */
  readonly drainTimeoutMs?: number;
  /** Time between checks of a draining group. Default 2000 ms. */
  readonly drainPollMs?: number;
  /** The declarative file, applied at start. Default none. */
  readonly bootstrap?: Bootstrap;
  /** Where the reconcile loop's metrics go. Default none. */
  readonly meter?: Meter;
}

export interface Provisioner {
  readonly catalogs: CatalogService;
  readonly groups: GroupService;
  readonly reconciler: Reconciler;
  /** The `/v1` routes; mount behind the bearer-token check. */
  readonly router: Router;
  /** Applies the bootstrap file, runs a first reconcile pass, then reconciles on the interval. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Wires the provisioner's services; `main.ts` and the tests give it real adapters. */
export function createProvisioner(options: ProvisionerOptions): Provisioner {
  const clock = options.clock ?? systemClock;
  const metrics = options.meter === undefined ? undefined : new ProvisionerMetrics(options.meter);
  const groups = new GroupService({
    store: options.store,
    cluster: options.cluster,
    publisher: options.publisher,
    activity: options.activity,
    logger: options.logger,
    clock,
    drainTimeoutMs: options.drainTimeoutMs ?? 30 * 60_000,
    metrics,
    ...(options.sparkPolicy === undefined ? {} : { sparkPolicy: options.sparkPolicy }),
  });
  const catalogs = new CatalogService({
    store: options.store,
    publisher: options.publisher,
    probe: options.probe,
    logger: options.logger,
    clock,
    access: options.access ?? defaultCatalogAccessPolicy,
    onCatalogChanged: (name) => groups.catalogChanged(name),
  });
  const reconciler = new Reconciler(groups, catalogs, {
    intervalMs: options.reconcileIntervalMs ?? 60_000,
    drainPollMs: options.drainPollMs ?? 2_000,
    logger: options.logger,
    metrics,
  });
  return {
    catalogs,
    groups,
    reconciler,
    router: apiRouter({ catalogs, groups, reconciler }),
    async start() {
      if (options.bootstrap !== undefined)
        await applyBootstrap(options.bootstrap, catalogs, groups, options.logger);
      await reconciler.start();
      // Groups left draining by a previous process are followed again.
      for (const view of await groups.list()) {
        if (view.status.phase === 'draining' || view.status.phase === 'deleting')
          reconciler.follow(view.name);
      }
    },
    stop: () => reconciler.stop(),
  };
}
