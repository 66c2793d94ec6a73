import { randomUUID } from 'node:crypto';
import {
  alreadyExists,
  badRequest,
  conflict,
  invalid,
  KubeApiError,
  MODIFIED_SINCE,
  notFound,
  StatusReason,
} from './api-status.ts';
import type { StatusCause } from './api-status.ts';
import type { KubeObject, ObjectMeta } from './kube-object.ts';
import { isRecord, WatchEventType } from './kube-object.ts';
import { parseFieldSelector, parseSelector } from './label-selector.ts';
import { jsonPatch, mergePatch } from './patches.ts';
import type { ResourceType } from './resource-types.ts';
import { apiVersionOf, resourceTypeOf, SPARK_GROUP } from './resource-types.ts';
import { quotaUsed, sparkUsage, type AppUsage } from './spark-quota-usage.ts';
import { labelProblems, nameProblems } from './validation.ts';

/** Patch content types the fake accepts (`application/apply-patch+yaml` is not supported). */
export const PatchType = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategicMerge: 'application/strategic-merge-patch+json',
} as const;
export type PatchType = (typeof PatchType)[keyof typeof PatchType];

export interface ListOptions {
  readonly labelSelector?: string | null;
  readonly fieldSelector?: string | null;
}

export interface WatchOptions extends ListOptions {
  /** Only this namespace; absent → all namespaces (or a cluster-scoped kind). */
  readonly namespace?: string;
  /** Deliver events after this version; absent or "0" → first an ADDED per current object. */
  readonly resourceVersion?: string | null;
}

export type WatchListener = (type: WatchEventType, object: KubeObject) => void;

export interface WriteOptions {
  /** `status`: change only the status (the `/status` subresource). */
  readonly subresource?: 'status';
}

export interface DeletePreconditions {
  readonly uid?: string;
  readonly resourceVersion?: string;
}

export interface NodeSpec {
  readonly name: string;
  /** Allocatable cpu, a Kubernetes quantity ("8"). */
  readonly cpu: string;
  /** Allocatable memory, a Kubernetes quantity ("32Gi"). */
  readonly memory: string;
  /** Allocatable pods; default "110". */
  readonly pods?: string;
}

export interface FakeKubeStoreOptions {
  /** Nodes to seed. Default one node `fake-node-1` with 16 cpu and 64Gi. */
  readonly nodes?: readonly NodeSpec[];
}

interface StoredEvent {
  readonly rv: number;
  readonly type: ResourceType;
  readonly eventType: WatchEventType;
  readonly object: KubeObject;
  /** The object before a modification, so label-filtered watches see it leave or enter. */
  readonly previous: KubeObject | undefined;
}

interface Watcher {
  readonly type: ResourceType;
  readonly namespace: string | undefined;
  readonly matches: (object: KubeObject) => boolean;
  readonly listener: WatchListener;
}

const clone = <T>(value: T): T => structuredClone(value);

function keyOf(namespace: string | undefined, name: string): string {
  return `${namespace ?? ''}/${name}`;
}

/** Everything but metadata and status: a change there bumps `metadata.generation`. */
function specPart(object: KubeObject): string {
  const rest: Record<string, unknown> = { ...object };
  delete rest.metadata;
  delete rest.status;
  return JSON.stringify(rest);
}

/**
 * The fake API server's state: objects by type, one cluster-wide resourceVersion counter
 * (like etcd's revision), an event history for watches and the live watchers. The HTTP
 * layer is a thin translation of this class; tests may also call it directly (e.g. to play
 * the Spark operator writing a status). Every method returns copies.
 */
export class FakeKubeStore {
  private revision = 0;
  private readonly objects = new Map<ResourceType, Map<string, KubeObject>>();
  private readonly history: StoredEvent[] = [];
  private readonly watchers = new Set<Watcher>();
  /** Each stored application's quota usage, computed once per stored object. */
  private readonly appUsage = new WeakMap<object, AppUsage | undefined>();

  constructor(options: FakeKubeStoreOptions = {}) {
    for (const name of ['default', 'kube-system']) {
      this.create(resourceTypeOf('namespaces'), undefined, { metadata: { name } });
    }
    for (const node of options.nodes ?? [{ name: 'fake-node-1', cpu: '16', memory: '64Gi' }]) {
      this.addNode(node);
    }
  }

  /** The current (latest) resourceVersion, as lists report it. */
  resourceVersion(): string {
    return String(this.revision);
  }

  addNode(node: NodeSpec): KubeObject {
    const resources = { cpu: node.cpu, memory: node.memory, pods: node.pods ?? '110' };
    return this.create(resourceTypeOf('nodes'), undefined, {
      metadata: { name: node.name, labels: { 'kubernetes.io/hostname': node.name } },
      status: {
        capacity: resources,
        allocatable: resources,
        conditions: [{ type: 'Ready', status: 'True' }],
      },
    });
  }

  get(type: ResourceType, namespace: string | undefined, name: string): KubeObject {
    const object = this.bucket(type).get(keyOf(this.scope(type, namespace), name));
    if (object === undefined) throw notFound(type, name);
    return clone(object);
  }

  list(
    type: ResourceType,
    namespace: string | undefined,
    options: ListOptions = {},
  ): { items: KubeObject[]; resourceVersion: string } {
    const matches = this.matcher(options);
    const scope = this.scope(type, namespace);
    const items = [...this.bucket(type).values()]
      .filter((object) => scope === undefined || object.metadata.namespace === scope)
      .filter(matches)
      .sort((a, b) =>
        keyOf(a.metadata.namespace, a.metadata.name).localeCompare(
          keyOf(b.metadata.namespace, b.metadata.name),
        ),
      )
      .map(clone);
    return { items, resourceVersion: this.resourceVersion() };
  }

  create(type: ResourceType, namespace: string | undefined, body: unknown): KubeObject {
    const object = this.normalize(type, namespace, body);
    const meta = object.metadata;
    if (typeof meta.generateName === 'string' && meta.name === '') {
      meta.name = `${meta.generateName}${randomUUID().replace(/-/g, '').slice(0, 5)}`;
    }
    this.validate(type, object);
    if (type.namespaced) this.requireNamespace(meta.namespace ?? '');
    const bucket = this.bucket(type);
    const key = keyOf(meta.namespace, meta.name);
    if (bucket.has(key)) throw alreadyExists(type, meta.name);
    if (type.group === SPARK_GROUP) this.admitSparkApplication(meta.namespace ?? '');
    // Server-owned fields: whatever the client sent is replaced.
    meta.uid = randomUUID();
    meta.creationTimestamp = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    meta.generation = 1;
    delete meta.deletionTimestamp;
    if (type.statusSubresource && type.group !== '') delete object.status;
    this.defaultsOnCreate(type, object);
    return this.commit(type, WatchEventType.added, object, undefined);
  }

  replace(
    type: ResourceType,
    namespace: string | undefined,
    name: string,
    body: unknown,
    options: WriteOptions = {},
  ): KubeObject {
    const current = this.current(type, namespace, name);
    const candidate = this.normalize(type, namespace, body);
    if (candidate.metadata.name !== name) {
      throw badRequest(
        `the name of the object (${candidate.metadata.name}) does not match the name on the URL (${name})`,
      );
    }
    const sent = candidate.metadata.resourceVersion;
    if (sent === undefined || sent === '') {
      if (type.requireResourceVersionOnUpdate) {
        throw invalid(type, name, [
          {
            reason: 'FieldValueInvalid',
            message: 'Invalid value: 0x0: must be specified for an update',
            field: 'metadata.resourceVersion',
          },
        ]);
      }
      candidate.metadata.resourceVersion = current.metadata.resourceVersion;
    }
    return this.update(type, current, candidate, options);
  }

  patch(
    type: ResourceType,
    namespace: string | undefined,
    name: string,
    patchType: string,
    patch: unknown,
    options: WriteOptions = {},
  ): KubeObject {
    const current = this.current(type, namespace, name);
    let patched: unknown;
    switch (patchType) {
      case PatchType.json:
        patched = jsonPatch(current, patch);
        break;
      case PatchType.merge:
      case PatchType.strategicMerge:
        if (!isRecord(patch)) throw badRequest('a merge patch must be a JSON object');
        patched = mergePatch(current, patch);
        break;
      default:
        throw new KubeApiError(
          415,
          StatusReason.unsupportedMediaType,
          `the body of the request was in an unknown format - accepted media types include: ${Object.values(PatchType).join(', ')}`,
        );
    }
    const candidate = this.normalize(type, namespace, patched);
    if (candidate.metadata.name !== name)
      throw badRequest('metadata.name cannot be changed by a patch');
    return this.update(type, current, candidate, options);
  }

  delete(
    type: ResourceType,
    namespace: string | undefined,
    name: string,
    preconditions: DeletePreconditions = {},
  ): KubeObject {
    const current = this.current(type, namespace, name);
    if (preconditions.uid !== undefined && preconditions.uid !== current.metadata.uid) {
      throw conflict(
        type,
        name,
        `Precondition failed: UID in precondition: ${preconditions.uid}, UID in object meta: ${current.metadata.uid}`,
      );
    }
    if (
      preconditions.resourceVersion !== undefined &&
      preconditions.resourceVersion !== current.metadata.resourceVersion
    ) {
      throw conflict(
        type,
        name,
        `Precondition failed: ResourceVersion in precondition: ${preconditions.resourceVersion}, ResourceVersion in meta: ${current.metadata.resourceVersion}`,
      );
    }
    if (type.plural === 'namespaces') {
      // The namespace controller's work, done at once: every object in it goes first.
      for (const [other, bucket] of this.objects) {
        if (!other.namespaced) continue;
        for (const object of [...bucket.values()]) {
          if (object.metadata.namespace === name) this.remove(other, object);
        }
      }
    }
    return this.remove(type, current);
  }

  deleteCollection(
    type: ResourceType,
    namespace: string | undefined,
    options: ListOptions = {},
  ): KubeObject[] {
    return this.list(type, namespace, options).items.map((object) =>
      this.delete(type, object.metadata.namespace, object.metadata.name),
    );
  }

  /**
   * Streams events to `listener` until the returned function is called. Every event is kept,
   * so a watch resumes from any `resourceVersion`: an expired watch (410) is shown on the real
   * API server (services/dispatcher/src/adapters/kube-quota.int.test.ts), not here.
   */
  watch(type: ResourceType, options: WatchOptions, listener: WatchListener): () => void {
    const namespace = this.scope(type, options.namespace);
    const watcher: Watcher = { type, namespace, matches: this.matcher(options), listener };
    const from = options.resourceVersion;
    if (from === undefined || from === null || from === '' || from === '0') {
      for (const object of this.list(type, namespace, options).items) {
        listener(WatchEventType.added, object);
      }
    } else {
      const since = Number(from);
      if (!Number.isInteger(since) || since < 0)
        throw badRequest(`invalid resourceVersion ${JSON.stringify(from)}`);
      for (const event of this.history) {
        if (event.rv > since) this.deliver(watcher, event);
      }
    }
    this.watchers.add(watcher);
    return () => {
      this.watchers.delete(watcher);
    };
  }

  // ---- internals ----

  private bucket(type: ResourceType): Map<string, KubeObject> {
    let bucket = this.objects.get(type);
    if (bucket === undefined) {
      bucket = new Map();
      this.objects.set(type, bucket);
    }
    return bucket;
  }

  private scope(type: ResourceType, namespace: string | undefined): string | undefined {
    return type.namespaced ? namespace : undefined;
  }

  /**
   * The stored objects of a type in a namespace, not copied: for reading inside the store
   * only. The quota controller reads every application on each change; copying them all (as
   * `list` does for callers) made each create cost O(applications) copies.
   */
  private stored(type: ResourceType, namespace: string): KubeObject[] {
    return [...this.bucket(type).values()].filter((o) => o.metadata.namespace === namespace);
  }

  private current(type: ResourceType, namespace: string | undefined, name: string): KubeObject {
    const object = this.bucket(type).get(keyOf(this.scope(type, namespace), name));
    if (object === undefined) throw notFound(type, name);
    return object;
  }

  private matcher(options: ListOptions): (object: KubeObject) => boolean {
    const labels = parseSelector(options.labelSelector);
    const fields = parseFieldSelector(options.fieldSelector);
    return (object) =>
      labels(object.metadata.labels ?? {}) &&
      fields({
        'metadata.name': object.metadata.name,
        ...(object.metadata.namespace === undefined
          ? {}
          : { 'metadata.namespace': object.metadata.namespace }),
      });
  }

  private requireNamespace(namespace: string): void {
    const type = resourceTypeOf('namespaces');
    if (!this.bucket(type).has(keyOf(undefined, namespace))) throw notFound(type, namespace);
  }

  /** Checks the body's shape, kind and namespace against the URL; returns a copy to work on. */
  private normalize(type: ResourceType, namespace: string | undefined, body: unknown): KubeObject {
    if (!isRecord(body)) throw badRequest('the request body must be a JSON object');
    const object = clone(body);
    const apiVersion = apiVersionOf(type);
    if (object.apiVersion !== undefined && object.apiVersion !== apiVersion) {
      throw badRequest(
        `the API version in the data (${JSON.stringify(object.apiVersion)}) does not match the expected API version (${apiVersion})`,
      );
    }
    if (object.kind !== undefined && object.kind !== type.kind) {
      throw badRequest(
        `the kind in the data (${JSON.stringify(object.kind)}) does not match the expected kind (${type.kind})`,
      );
    }
    const meta = isRecord(object.metadata) ? object.metadata : {};
    if (type.namespaced) {
      if (meta.namespace !== undefined && meta.namespace !== '' && meta.namespace !== namespace) {
        throw badRequest(
          'the namespace of the provided object does not match the namespace sent on the request',
        );
      }
      meta.namespace = namespace;
    } else delete meta.namespace;
    if (meta.name === undefined) meta.name = '';
    object.apiVersion = apiVersion;
    object.kind = type.kind;
    object.metadata = meta;
    return object as KubeObject;
  }

  private validate(type: ResourceType, object: KubeObject): void {
    const name = object.metadata.name;
    const causes: StatusCause[] = [];
    if (typeof name !== 'string' || name === '') {
      causes.push({
        reason: 'FieldValueRequired',
        message: 'Required value: name or generateName is required',
        field: 'metadata.name',
      });
    } else causes.push(...nameProblems(type, name));
    causes.push(...labelProblems(object.metadata.labels));
    if (type.plural === 'resourcequotas') causes.push(...quantityProblems(object, 'spec.hard'));
    if (type.plural === 'rolebindings' && !isRecord(object.roleRef)) {
      causes.push({ reason: 'FieldValueRequired', message: 'Required value', field: 'roleRef' });
    }
    if (causes.length > 0) throw invalid(type, String(name), causes);
  }

  private defaultsOnCreate(type: ResourceType, object: KubeObject): void {
    if (type.plural === 'namespaces') {
      object.metadata.labels = {
        ...object.metadata.labels,
        'kubernetes.io/metadata.name': object.metadata.name,
      };
      object.spec = { finalizers: ['kubernetes'] };
      object.status = { phase: 'Active' };
    }
    if (type.plural === 'resourcequotas') {
      const hard = (
        isRecord(object.spec) && isRecord(object.spec.hard) ? object.spec.hard : {}
      ) as Record<string, string>;
      object.status = { hard, used: quotaUsed(hard, sparkUsage([])) };
    }
  }

  private update(
    type: ResourceType,
    current: KubeObject,
    candidate: KubeObject,
    options: WriteOptions,
  ): KubeObject {
    const name = current.metadata.name;
    if (candidate.metadata.resourceVersion !== current.metadata.resourceVersion) {
      throw conflict(type, name, MODIFIED_SINCE);
    }
    let next: KubeObject;
    if (options.subresource === 'status') {
      if (!type.statusSubresource) throw notFound(type, name);
      // Only the status moves; the rest of the object stays as stored.
      next = clone(current);
      if (candidate.status === undefined) delete next.status;
      else next.status = candidate.status;
    } else {
      next = candidate;
      if (type.statusSubresource) {
        if (current.status === undefined) delete next.status;
        else next.status = clone(current.status);
      }
    }
    if (
      type.plural === 'rolebindings' &&
      JSON.stringify(next.roleRef) !== JSON.stringify(current.roleRef)
    ) {
      throw invalid(type, name, [
        {
          reason: 'FieldValueInvalid',
          message: 'Invalid value: cannot change roleRef',
          field: 'roleRef',
        },
      ]);
    }
    this.validate(type, next);
    // Server-owned metadata survives whatever the client sent.
    const meta: ObjectMeta = next.metadata;
    meta.uid = current.metadata.uid;
    meta.creationTimestamp = current.metadata.creationTimestamp;
    meta.namespace = current.metadata.namespace;
    if (meta.namespace === undefined) delete meta.namespace;
    meta.generation = current.metadata.generation + (specPart(next) === specPart(current) ? 0 : 1);
    if (type.plural === 'namespaces') {
      meta.labels = { ...meta.labels, 'kubernetes.io/metadata.name': name };
    }
    if (
      JSON.stringify({ ...next, metadata: { ...meta, resourceVersion: '' } }) ===
      JSON.stringify({ ...current, metadata: { ...current.metadata, resourceVersion: '' } })
    ) {
      // A no-op write keeps the resourceVersion and sends no event, as the real server does.
      return clone(current);
    }
    return this.commit(type, WatchEventType.modified, next, current);
  }

  private remove(type: ResourceType, current: KubeObject): KubeObject {
    const removed = clone(current);
    if (type.plural === 'namespaces') {
      removed.status = { phase: 'Terminating' };
      removed.metadata.deletionTimestamp = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    }
    return this.commit(type, WatchEventType.deleted, removed, current);
  }

  /** Stores (or removes) the object at a new resourceVersion and tells the watchers. */
  private commit(
    type: ResourceType,
    eventType: WatchEventType,
    object: KubeObject,
    previous: KubeObject | undefined,
  ): KubeObject {
    this.revision += 1;
    object.metadata.resourceVersion = String(this.revision);
    const bucket = this.bucket(type);
    const key = keyOf(object.metadata.namespace, object.metadata.name);
    if (eventType === WatchEventType.deleted) bucket.delete(key);
    else bucket.set(key, object);
    // Stored objects are never changed in place (a write stores a new one), so the event
    // shares it; each watcher gets its own copy.
    const event: StoredEvent = { rv: this.revision, type, eventType, object, previous };
    this.history.push(event);
    for (const watcher of this.watchers) this.deliver(watcher, event);
    const namespace = object.metadata.namespace;
    if (
      namespace !== undefined &&
      (type.group === SPARK_GROUP || type.plural === 'resourcequotas')
    ) {
      this.refreshQuotas(namespace);
    }
    return clone(object);
  }

  private deliver(watcher: Watcher, event: StoredEvent): void {
    if (watcher.type !== event.type) return;
    if (watcher.namespace !== undefined && event.object.metadata.namespace !== watcher.namespace)
      return;
    const now = watcher.matches(event.object);
    const before = event.previous !== undefined && watcher.matches(event.previous);
    let type: WatchEventType | undefined;
    switch (event.eventType) {
      case WatchEventType.added:
        type = now ? WatchEventType.added : undefined;
        break;
      case WatchEventType.modified:
        // An object that starts or stops matching the selector enters or leaves the watch.
        type =
          now && before
            ? WatchEventType.modified
            : now
              ? WatchEventType.added
              : before
                ? WatchEventType.deleted
                : undefined;
        break;
      case WatchEventType.deleted:
        type = before || now ? WatchEventType.deleted : undefined;
        break;
      case WatchEventType.bookmark:
      case WatchEventType.error:
        type = undefined;
    }
    if (type !== undefined) watcher.listener(type, clone(event.object));
  }

  /** The quota controller's job, done synchronously: `status.hard` = `spec.hard`, `status.used` from the Spark applications. */
  private refreshQuotas(namespace: string): void {
    const quotaType = resourceTypeOf('resourcequotas');
    const apps = this.stored(resourceTypeOf('sparkapplications', SPARK_GROUP), namespace);
    const usage = sparkUsage(apps, this.appUsage);
    for (const quota of this.stored(quotaType, namespace)) {
      const hard = (
        isRecord(quota.spec) && isRecord(quota.spec.hard) ? quota.spec.hard : {}
      ) as Record<string, string>;
      const status = { hard: { ...hard }, used: quotaUsed(hard, usage) };
      if (JSON.stringify(status) === JSON.stringify(quota.status)) continue;
      const next = clone(quota);
      next.status = status;
      this.commit(quotaType, WatchEventType.modified, next, quota);
    }
  }

  /** Object-count quota is enforced at admission, as the real server does (403). */
  private admitSparkApplication(namespace: string): void {
    const resource = 'count/sparkapplications.sparkoperator.k8s.io';
    for (const quota of this.stored(resourceTypeOf('resourcequotas'), namespace)) {
      const hard =
        isRecord(quota.spec) && isRecord(quota.spec.hard) ? quota.spec.hard[resource] : undefined;
      if (typeof hard !== 'string') continue;
      const used = this.stored(resourceTypeOf('sparkapplications', SPARK_GROUP), namespace).length;
      if (used + 1 > Number(hard)) {
        throw new KubeApiError(
          403,
          StatusReason.forbidden,
          `sparkapplications.sparkoperator.k8s.io is forbidden: exceeded quota: ${quota.metadata.name}, requested: ${resource}=1, used: ${resource}=${used}, limited: ${resource}=${hard}`,
          { kind: 'sparkapplications', group: SPARK_GROUP },
        );
      }
    }
  }
}

function quantityProblems(object: KubeObject, path: string): StatusCause[] {
  const [first = '', second = ''] = path.split('.');
  const section = object[first];
  const map = isRecord(section) ? section[second] : undefined;
  if (map === undefined) return [];
  if (!isRecord(map))
    return [{ reason: 'FieldValueInvalid', message: 'Invalid value: must be a map', field: path }];
  const problems: StatusCause[] = [];
  for (const [key, value] of Object.entries(map)) {
    if (typeof value !== 'number' && (typeof value !== 'string' || !QUANTITY.test(value))) {
      problems.push({
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${JSON.stringify(value)}: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
        field: `${path}[${key}]`,
      });
    }
  }
  return problems;
}

const QUANTITY = /^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$/;
