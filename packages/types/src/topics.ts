/** Kafka topic names. */
export const Topics = {
  commits: 'icepack.commits',
  scanRequests: 'icepack.scan-requests',
  tableState: 'icepack.table-state',
  taskEvents: 'icepack.task-events',
  catalogs: 'icepack.catalogs',
  bindings: 'icepack.bindings',
  dlq: 'icepack.dlq',
} as const;
export type Topic = (typeof Topics)[keyof typeof Topics];

/**
 * What a topic is for: `input` from outside writers; `work` items consumed once by a
 * group; `compacted` holds the latest value per key (null value = deleted); `log` is an
 * append-only history.
 */
export const TopicKind = {
  input: 'input',
  work: 'work',
  compacted: 'compacted',
  log: 'log',
} as const;
export type TopicKind = (typeof TopicKind)[keyof typeof TopicKind];

export interface TopicSpec {
  readonly name: Topic;
  readonly kind: TopicKind;
  /** What the Kafka key is. */
  readonly key: string;
  /** `cleanup.policy` to create the topic with. */
  readonly cleanupPolicy: 'compact' | 'delete';
}

export const TopicSpecs: { readonly [K in keyof typeof Topics]: TopicSpec } = {
  commits: {
    name: Topics.commits,
    kind: TopicKind.input,
    key: 'tableKey(table): catalog/ns1.ns2/table',
    cleanupPolicy: 'delete',
  },
  scanRequests: {
    name: Topics.scanRequests,
    kind: TopicKind.work,
    key: 'tableKey(table)',
    cleanupPolicy: 'delete',
  },
  tableState: {
    name: Topics.tableState,
    kind: TopicKind.compacted,
    key: 'tableKey(table); a null value (tombstone) means the table was dropped',
    cleanupPolicy: 'compact',
  },
  taskEvents: {
    name: Topics.taskEvents,
    kind: TopicKind.log,
    key: 'tableKey(table)',
    cleanupPolicy: 'delete',
  },
  catalogs: {
    name: Topics.catalogs,
    kind: TopicKind.compacted,
    key: 'catalog name; a null value means the catalog was removed',
    cleanupPolicy: 'compact',
  },
  bindings: {
    name: Topics.bindings,
    kind: TopicKind.compacted,
    key: 'catalog name; a null value means the catalog is unbound',
    cleanupPolicy: 'compact',
  },
  dlq: {
    name: Topics.dlq,
    kind: TopicKind.log,
    key: 'the original message key (null if it had none)',
    cleanupPolicy: 'delete',
  },
};
