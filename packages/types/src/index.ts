// The public surface of @icepack/types, named one by one.

export { parseJsonExact, stringifyJson } from './json-exact.ts';
export {
  ValidationError,
  formatPath,
  formatZodError,
  parseWith,
  zodIssues,
  type ValidationIssue,
} from './validation-error.ts';
export {
  int64,
  int64String,
  count,
  isoDateTime,
  epochMillis,
  traceparent,
  stringMap,
  dnsLabel,
} from './primitives.ts';
export {
  tableIdSchema,
  tableKey,
  parseTableKey,
  formatTableName,
  sameTable,
  InvalidTableKeyError,
  type TableId,
} from './table-id.ts';
export { Topics, TopicKind, TopicSpecs, type Topic, type TopicSpec } from './topics.ts';
export { BULLMQ_PREFIX, JOB_RUN_LOCATION_FIELD, queueNameForCatalog } from './queue-names.ts';
export { QUOTA_USE_EVERY_MS, quotaUseKey, quotaUseSchema, type QuotaUse } from './quota-use.ts';
export {
  MAX_KEPT_SIZING_SAMPLES,
  MAX_SIZING_SAMPLES,
  sizingModelKey,
  sizingModelSchema,
  sizingSampleSchema,
  sizingKeptSamplesKey,
  sizingSamplesKey,
  type SizingModel,
  type SizingSample,
} from './sizing-model.ts';
export { runLocationSchema, type RunLocation } from './run-location.ts';
export {
  envelopeBaseSchema,
  envelopeSchema,
  wrapEnvelope,
  type Envelope,
  type EnvelopeOptions,
} from './envelope.ts';
export {
  MessageTypes,
  MessageType,
  TaskEventTypes,
  type MessageTypeSpec,
  type MessagePayload,
} from './message-types.ts';
export {
  packPartitions,
  packedPartitionsJson,
  unpackPartitions,
  type PackedPartitions,
} from './packed-partitions.ts';
export {
  createEnvelope,
  parseEnvelope,
  parseEnvelopeOf,
  parseMessage,
  serializeEnvelope,
  type MessageEnvelope,
  type AnyMessageEnvelope,
} from './messages.ts';
export {
  commitEventSchema,
  snapshotOperationSchema,
  SnapshotOperation,
  type CommitEvent,
} from './commit-event.ts';
export { scanRequestSchema, ScanReason, type ScanRequest } from './scan-request.ts';
export {
  dlqRecordSchema,
  dlqRecordFrom,
  dlqKey,
  type DlqRecord,
  type DlqSource,
} from './dlq-record.ts';
export {
  tableStateSchema,
  parseTableState,
  partitionSpecStateSchema,
  sortOrderStateSchema,
  fileFiguresSchema,
  danglingDeleteFiguresSchema,
  sizeBucketSchema,
  snapshotFiguresSchema,
  expiryFiguresSchema,
  newDataSchema,
  refStateSchema,
  partitionStateSchema,
  partitionTotalsSchema,
  lastMaintenanceSchema,
  MAX_TABLE_STATE_PARTITIONS,
  TABLE_STATE_TOMBSTONE,
  isTombstone,
  SortDirection,
  NullOrder,
  RefType,
  type TableState,
  type TableStateTombstone,
  type FileFigures,
  type DanglingDeleteFigures,
  type SizeBucket,
  type PartitionState,
  type PartitionTotals,
  type PartitionSpecState,
  type RefState,
} from './table-state.ts';
export {
  TaskType,
  taskTypeSchema,
  taskJobId,
  taskJobIdOfKey,
  taskGroupOf,
  MAX_TASK_GROUPS,
  MAX_TASK_PARTITIONS,
  taskSchema,
  parseTask,
  cleanupParametersSchema,
  orphansParametersSchema,
  mergeParametersSchema,
  sortParametersSchema,
  sortColumnSchema,
  partitionPredicateSchema,
  partitionSetSchema,
  expandPartitionSets,
  compactPartitions,
  scoreSchema,
  scorePartSchema,
  taskStateRefSchema,
  SortStrategy,
  HILBERT_DIMENSIONS,
  MIN_PRIORITY,
  MAX_PRIORITY,
  type Task,
  type TaskInput,
  type PartitionPredicate,
  type PartitionSet,
  type TaskParameters,
  type CleanupParameters,
  type OrphansParameters,
  type MergeParameters,
  type SortParameters,
  type TaskScore,
} from './task.ts';
export {
  TaskStatus,
  TaskTransitions,
  INITIAL_TASK_STATUS,
  assertLifecycle,
  assertTransition,
  canTransition,
  isTerminalStatus,
  InvalidTaskTransitionError,
} from './task-status.ts';
export {
  taskEventSchema,
  parseTaskEvent,
  assertEventLifecycle,
  taskEventWithStatus,
  healthFiguresSchema,
  taskErrorSchema,
  taskCostSchema,
  taskBenefitSchema,
  type TaskEvent,
  type TaskCost,
  type TaskBenefit,
  type HealthFigures,
  type TaskError,
} from './task-event.ts';
export { sessionTailSchema, parseSessionTail, type SessionTail } from './session-tail.ts';
export {
  secretRefSchema,
  looksLikeSecretKey,
  rejectInlineSecrets,
  SPARK_REDACTION_REGEX,
  type SecretRef,
} from './secret-ref.ts';
export {
  catalogSchema,
  catalogPolicySchema,
  catalogSparkConf,
  parseCatalog,
  catalogAuthSchema,
  CatalogAuthType,
  type Catalog,
  type CatalogInput,
  type CatalogAuth,
  type CatalogPolicyDefinition,
} from './catalog.ts';
export {
  InvalidQuantityError,
  isQuantity,
  parseCpuMillicores,
  parseMemoryBytes,
  isSparkMemory,
  parseSparkMemoryBytes,
} from './quantity.ts';
export {
  resourceGroupSchema,
  parseResourceGroup,
  sparkSettingsSchema,
  SPARK_DEFAULTS,
  NAMESPACE_PREFIX,
  MAX_GROUP_NAME_LENGTH,
  DEFAULT_SMALL_SLOTS,
  MAX_SMALL_SLOTS,
  namespaceForGroup,
  type ResourceGroup,
  type ResourceGroupInput,
  type SparkSettings,
} from './resource-group.ts';
export { bindingSchema, parseBinding, BindingState, Runner, type Binding } from './binding.ts';
export {
  sampleTableId,
  sampleTableState,
  sampleMergeTask,
  sampleBinding,
  sampleSessionTail,
} from './samples.ts';
export {
  icebergTypeSchema,
  icebergSchemaSchema,
  nestedFieldSchema,
  structTypeSchema,
  listTypeSchema,
  mapTypeSchema,
  type IcebergType,
  type IcebergNestedField,
  type IcebergStructType,
  type IcebergListType,
  type IcebergMapType,
  type IcebergSchema,
} from './iceberg/types.ts';
export {
  partitionFieldSchema,
  partitionSpecSchema,
  sortFieldSchema,
  sortOrderSchema,
  type IcebergPartitionField,
  type IcebergPartitionSpec,
  type IcebergSortField,
  type IcebergSortOrder,
} from './iceberg/partitioning.ts';
export {
  snapshotSchema,
  snapshotV2Schema,
  snapshotSummarySchema,
  snapshotLogEntrySchema,
  metadataLogEntrySchema,
  snapshotRefSchema,
  type IcebergSnapshot,
  type IcebergSnapshotSummary,
  type IcebergSnapshotRef,
} from './iceberg/snapshots.ts';
export {
  statisticsFileSchema,
  partitionStatisticsFileSchema,
  blobMetadataSchema,
  encryptedKeySchema,
  type IcebergStatisticsFile,
  type IcebergPartitionStatisticsFile,
  type IcebergEncryptedKey,
} from './iceberg/statistics.ts';
export {
  tableMetadataSchema,
  tableMetadataV1Schema,
  tableMetadataV2Schema,
  tableMetadataV3Schema,
  parseTableMetadata,
  validateTableMetadata,
  type TableMetadata,
  type TableMetadataV1,
  type TableMetadataV2,
  type TableMetadataV3,
} from './iceberg/table-metadata.ts';
export {
  loadTableResultSchema,
  storageCredentialSchema,
  parseLoadTableResult,
  type LoadTableResult,
  type IcebergStorageCredential,
} from './iceberg/load-table-result.ts';
