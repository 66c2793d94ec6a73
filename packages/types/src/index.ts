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
export { BULLMQ_PREFIX, queueNameForCatalog } from './queue-names.ts';
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
  type MessageTypeSpec,
  type MessagePayload,
} from './message-types.ts';
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
