import type { Catalog, ResourceGroup } from '@icepack/types';
import { BindingState, parseResourceGroup, ValidationError } from '@icepack/types';
import type { Logger, SparkSettingsPolicy } from '@icepack/runtime';
import { defaultSparkSettingsPolicy, sparkSettingsProblems } from '@icepack/runtime';
import type { ClusterPort } from '../adapters/cluster-port.ts';
import type { ProvisionerMetrics } from '../adapters/provisioner-metrics.ts';
import type { Publisher } from '../adapters/publisher.ts';
import type { RedisStore } from '../adapters/redis-store.ts';
import { CreateGroupOutcome } from '../adapters/redis-store.ts';
import type { TaskActivity } from '../adapters/task-activity.ts';
import { bindingOf } from '../domain/binding-of.ts';
import type { Amount, Reservation } from '../domain/capacity.ts';
import { amountOf, checkCapacity } from '../domain/capacity.ts';
import {
  ConflictError,
  NotFoundError,
  UnavailableError,
  UnprocessableError,
} from '../domain/errors.ts';
import type { GroupRecord, GroupView } from '../domain/group-record.ts';
import {
  GroupPhase,
  GroupStep,
  groupView,
  KUBERNETES_STEPS,
  newGroupRecord,
  StepState,
  withPhase,
  withStep,
} from '../domain/group-record.ts';
import { ForeignNamespaceError } from '../domain/ownership.ts';
import { groupSparkDefaultsProblems } from '../domain/spark-defaults.ts';
import type { Clock } from './clock.ts';
import { KeyedMutex } from './keyed-mutex.ts';

export interface GroupServiceDeps {
  readonly store: RedisStore;
  readonly cluster: ClusterPort;
  readonly publisher: Publisher;
  readonly activity: TaskActivity;
  readonly logger: Logger;
  readonly clock: Clock;
  /** How long a drain waits for running tasks before cancelling them. */
  readonly drainTimeoutMs: number;
  /** Counts the loop's reconciles. Default none. */
  readonly metrics?: ProvisionerMetrics;
  /** Allowed sparkConf keys and image registries. Default {@link defaultSparkSettingsPolicy}. */
  readonly sparkPolicy?: SparkSettingsPolicy;
}

function messageOf(error: unknown): string {
  const body = (error as { body?: unknown }).body;
  if (typeof body === 'string') {
    try {
      const status = JSON.parse(body) as { message?: string };
      if (typeof status.message === 'string') return status.message;
    } catch {
      // not a Status body
    }
  }
  return error instanceof Error ? error.message : String(error);
}

/**
 * Resource groups: create (validate → persist → Kubernetes steps → ready → binding),
 * delete (drain → namespace → tombstone) and reconcile. Every pass over a group runs under
 * that group's lock, so a request and the reconcile loop never interleave in one process;
 * every step is idempotent, so two replicas doing the same pass is harmless.
 */
export class GroupService {
  readonly #deps: GroupServiceDeps;
  readonly #locks = new KeyedMutex();

  constructor(deps: GroupServiceDeps) {
    this.#deps = deps;
  }

  async list(): Promise<GroupView[]> {
    return (await this.#deps.store.listGroups()).map(groupView);
  }

  async get(name: string): Promise<GroupView> {
    return groupView(await this.#record(name));
  }

  async create(body: unknown): Promise<GroupView> {
    const group = this.#parse(body);
    const { store, cluster, clock } = this.#deps;
    const catalog = await store.getCatalog(group.catalog);
    if (catalog === undefined) {
      throw new UnprocessableError(
        `catalog "${group.catalog}" does not exist; create it first (POST /v1/catalogs)`,
      );
    }
    if ((await store.getGroup(group.name)) !== undefined) {
      throw new ConflictError(`resource group "${group.name}" already exists`);
    }
    const bound = await store.groupOfCatalog(group.catalog);
    if (bound !== undefined) {
      throw new ConflictError(
        `catalog "${group.catalog}" is already bound to resource group "${bound}"; one group per catalog`,
      );
    }
    let allocatable: Amount;
    let reservations: Reservation[];
    let foreign: ForeignNamespaceError | undefined;
    try {
      allocatable = await cluster.allocatable();
      reservations = await this.#reservations();
      foreign = await cluster.foreignNamespace(group);
    } catch (error) {
      throw new UnavailableError(
        `cannot read the capacity of ${cluster.where}: ${messageOf(error)}`,
        { cause: error },
      );
    }
    // Someone else's `icepack-<group>` is refused before anything is persisted.
    if (foreign !== undefined) {
      this.#deps.logger.warn(
        { group: group.name, namespace: foreign.namespace, error: foreign.message },
        'resource group refused: its namespace belongs to someone else',
      );
      throw foreign;
    }
    checkCapacity(group, allocatable, reservations, cluster.where);

    // Persisted before any Kubernetes call: a crash from here on is finished by reconcile.
    const record = newGroupRecord(group, cluster.mode, clock().toISOString());
    const outcome = await store.createGroup(record);
    if (outcome === CreateGroupOutcome.nameTaken)
      throw new ConflictError(`resource group "${group.name}" already exists`);
    if (outcome === CreateGroupOutcome.catalogBound) {
      throw new ConflictError(
        `catalog "${group.catalog}" is already bound to another resource group; one group per catalog`,
      );
    }
    this.#deps.logger.info(
      { group: group.name, catalog: group.catalog },
      'resource group persisted',
    );
    return groupView((await this.#locks.run(group.name, () => this.#pass(group.name))) ?? record);
  }

  /**
   * Validates the body, then refuses Spark settings the policy does not allow and a sparkConf
   * entry `spark-defaults.conf` could not carry (400 naming the field).
   */
  #parse(body: unknown): ResourceGroup {
    const group = parseResourceGroup(body);
    const problems = [
      ...sparkSettingsProblems(group.spark, this.#deps.sparkPolicy ?? defaultSparkSettingsPolicy),
      ...groupSparkDefaultsProblems(group),
    ];
    if (problems.length > 0) {
      throw new ValidationError(
        'resource group',
        problems.map((p) => ({ ...p, code: 'custom' })),
      );
    }
    return group;
  }

  /** Upsert for the bootstrap file: creates a missing group; an existing one must not change. */
  async apply(group: ResourceGroup): Promise<GroupView> {
    const existing = await this.#deps.store.getGroup(group.name);
    if (existing === undefined) return this.create(group);
    if (JSON.stringify(existing.group) !== JSON.stringify(group)) {
      this.#deps.logger.warn(
        { group: group.name },
        'the bootstrap file changes an existing resource group; groups are immutable, delete and re-create it to change it',
      );
    }
    return groupView(existing);
  }

  /** Starts deletion: the group drains (binding published as draining) and goes once no task runs. */
  async delete(name: string): Promise<GroupView> {
    return this.#locks.run(name, async () => {
      const record = await this.#record(name);
      if (record.phase !== GroupPhase.draining && record.phase !== GroupPhase.deleting) {
        const now = this.#deps.clock().toISOString();
        await this.#deps.store.saveGroup({
          ...withPhase(record, GroupPhase.draining, now),
          drainStartedAt: now,
        });
        this.#deps.logger.info({ group: name }, 'resource group draining');
      }
      const after = await this.#pass(name);
      return groupView(
        after ?? withPhase(record, GroupPhase.deleting, this.#deps.clock().toISOString()),
      );
    });
  }

  /** One pass over one group; resolves with its record, or undefined once it is gone. */
  async reconcile(name: string): Promise<GroupRecord | undefined> {
    return this.#locks.run(name, () => this.#pass(name));
  }

  /** Re-applies every group; a failure in one does not stop the others. */
  async reconcileAll(): Promise<void> {
    for (const record of await this.#deps.store.listGroups()) {
      let failed: boolean;
      try {
        const after = await this.reconcile(record.group.name);
        // A failing step does not throw: it is recorded on the group for the API to show.
        failed = Object.values(after?.steps ?? {}).some((s) => s.state === StepState.failed);
      } catch (error) {
        failed = true;
        this.#deps.logger.error(
          { err: error, group: record.group.name },
          'reconciling the resource group failed',
        );
      }
      this.#deps.metrics?.groupReconciled(record.group.name, failed ? 'failed' : 'ok');
    }
  }

  /** Re-applies the group bound to `catalog` (its ConfigMap carries the catalog). */
  async catalogChanged(catalog: string): Promise<void> {
    const name = await this.#deps.store.groupOfCatalog(catalog);
    if (name !== undefined) await this.reconcile(name);
  }

  async #record(name: string): Promise<GroupRecord> {
    const record = await this.#deps.store.getGroup(name);
    if (record === undefined) throw new NotFoundError(`resource group "${name}" not found`);
    return record;
  }

  /** Cluster quotas by group, plus stored groups whose quota is not there yet. */
  async #reservations(): Promise<Reservation[]> {
    const fromCluster = await this.#deps.cluster.reservations();
    const holders = new Set(fromCluster.map((r) => r.holder));
    const fromStore = (await this.#deps.store.listGroups())
      .filter((record) => !holders.has(record.group.name))
      .map((record) => ({ holder: record.group.name, ...amountOf(record.group) }));
    return [...fromCluster, ...fromStore];
  }

  async #pass(name: string): Promise<GroupRecord | undefined> {
    const record = await this.#deps.store.getGroup(name);
    if (record === undefined) return undefined;
    switch (record.phase) {
      case GroupPhase.provisioning:
      case GroupPhase.ready:
        return this.#provision(record);
      case GroupPhase.draining:
        return this.#drain(record);
      case GroupPhase.deleting:
        return this.#remove(record);
    }
  }

  /** Saves when something changed; undefined when the group was deleted meanwhile. */
  async #save(before: GroupRecord, after: GroupRecord): Promise<GroupRecord | undefined> {
    if (after === before) return after;
    return (await this.#deps.store.saveGroup(after)) ? after : undefined;
  }

  async #step(
    record: GroupRecord,
    step: GroupStep,
    state: StepState,
    message?: string,
  ): Promise<GroupRecord | undefined> {
    const current = record.steps[step];
    if (current.state === state && current.message === message) return record;
    return this.#save(
      record,
      withStep(record, step, state, this.#deps.clock().toISOString(), message),
    );
  }

  async #provision(start: GroupRecord): Promise<GroupRecord | undefined> {
    const { cluster, store, logger } = this.#deps;
    let record: GroupRecord | undefined = start;
    const catalog: Catalog | undefined = (await store.getCatalog(start.group.catalog))?.catalog;
    if (catalog === undefined) {
      return this.#step(
        start,
        GroupStep.configMap,
        StepState.failed,
        `catalog "${start.group.catalog}" not found`,
      );
    }
    if (cluster.mode === 'kubernetes') {
      // Every step, every pass: a hand-deleted or edited object is put back.
      for (const step of KUBERNETES_STEPS) {
        try {
          await cluster.applyStep(step, start.group, catalog);
        } catch (error) {
          const message = messageOf(error);
          if (error instanceof ForeignNamespaceError) {
            logger.error(
              { group: start.group.name, step, namespace: error.namespace, error: message },
              'the group namespace belongs to someone else; refusing to adopt it',
            );
          } else {
            logger.warn(
              { group: start.group.name, step, error: message },
              'provisioning step failed; the reconcile loop retries',
            );
          }
          return this.#step(record, step, StepState.failed, message);
        }
        record = await this.#step(record, step, StepState.done);
        if (record === undefined) return undefined;
      }
    }
    if (record.phase !== GroupPhase.ready) {
      record = await this.#save(
        record,
        withPhase(
          withStep(record, GroupStep.ready, StepState.done, this.#deps.clock().toISOString()),
          GroupPhase.ready,
          this.#deps.clock().toISOString(),
        ),
      );
      if (record === undefined) return undefined;
      logger.info({ group: start.group.name }, 'resource group ready');
    }
    return this.#publish(record, BindingState.ready);
  }

  /** Publishes the binding when its state differs from the last one published. */
  async #publish(record: GroupRecord, state: BindingState): Promise<GroupRecord | undefined> {
    if (record.publishedState === state && record.steps.bindingPublished.state === StepState.done)
      return record;
    const now = this.#deps.clock().toISOString();
    try {
      await this.#deps.publisher.publishBinding(bindingOf(record, now));
    } catch (error) {
      return this.#step(record, GroupStep.bindingPublished, StepState.failed, messageOf(error));
    }
    return this.#save(record, {
      ...withStep(record, GroupStep.bindingPublished, StepState.done, now),
      publishedState: state,
    });
  }

  async #drain(start: GroupRecord): Promise<GroupRecord | undefined> {
    const { activity, cluster, clock, logger, drainTimeoutMs } = this.#deps;
    // Dispatchers stop taking this catalog's tasks when they see the draining binding.
    let record = await this.#publish(start, BindingState.draining);
    if (record === undefined) return undefined;
    if (record.publishedState !== BindingState.draining) return record; // Kafka down: retry later.
    const running = await activity.running(record.group.catalog);
    const startedAt = Date.parse(record.drainStartedAt ?? record.updatedAt);
    const now = clock();
    if (running > 0 && now.getTime() - startedAt < drainTimeoutMs) {
      return record.runningTasks === running
        ? record
        : this.#save(record, { ...record, runningTasks: running });
    }
    if (running > 0) {
      const cancelled = await cluster.cancelJobs(record.group);
      logger.warn(
        { group: record.group.name, running, cancelled },
        'drain timed out; running jobs cancelled',
      );
    }
    record = await this.#save(record, {
      ...withPhase(record, GroupPhase.deleting, now.toISOString()),
      runningTasks: running,
    });
    return record === undefined ? undefined : this.#remove(record);
  }

  async #remove(record: GroupRecord): Promise<GroupRecord | undefined> {
    const { cluster, publisher, store, logger } = this.#deps;
    try {
      if (!(await cluster.deleteNamespace(record.group))) return record; // Still terminating.
    } catch (error) {
      if (!(error instanceof ForeignNamespaceError)) throw error;
      // Never ours (the group was refused it): left alone, and the group goes without it.
      logger.error(
        { group: record.group.name, namespace: error.namespace, error: error.message },
        'the group namespace belongs to someone else; leaving it in place',
      );
    }
    await publisher.tombstoneBinding(record.group.catalog);
    await store.deleteGroup(record);
    logger.info(
      { group: record.group.name, catalog: record.group.catalog },
      'resource group deleted; binding tombstoned',
    );
    return undefined;
  }
}
