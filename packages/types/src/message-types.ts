import type { z } from 'zod';
import { publishedBindingSchema } from './binding.ts';
import { publishedCatalogSchema } from './catalog.ts';
import { commitEventSchema } from './commit-event.ts';
import { dlqRecordSchema } from './dlq-record.ts';
import { scanRequestSchema } from './scan-request.ts';
import { tableStateSchema } from './table-state.ts';
import { isExactTableState } from './table-state-check.ts';
import { keepPackedPartitionsJson, packTableState, unpackTableState } from './packed-partitions.ts';
import { sessionTailSchema } from './session-tail.ts';
import { taskEventWithStatus } from './task-event.ts';
import { TaskStatus } from './task-status.ts';
import { Topics, type Topic } from './topics.ts';

export interface MessageTypeSpec {
  /** The version producers write. */
  readonly version: number;
  /** Versions consumers of this build accept. */
  readonly accepts: readonly number[];
  readonly topic: Topic;
  /** `event`: something happened (past tense); `command`: do this (imperative). */
  readonly kind: 'event' | 'command';
  readonly payload: z.ZodType;
  /**
   * A fast check of a JSON-parsed payload for the hot path: true only for a payload that
   * `payload` accepts and returns unchanged, so the schema's parse can be skipped; false
   * leaves it to the schema (which names the bad field). ADR 0050.
   */
  readonly exact?: (payload: unknown) => boolean;
  /**
   * A version whose payload is written in another shape than the schema's (the others are
   * the schema's shape): `encode` makes it from a valid payload (undefined: this payload
   * cannot be, write `plainVersion`), `decode` turns it back into the schema's input, and
   * `keepSent` may remember a part of the message as sent (its text or its bytes) for the
   * decoded payload.
   */
  readonly wire?: {
    readonly version: number;
    readonly plainVersion: number;
    readonly encode: (payload: never) => unknown;
    readonly decode: (payload: unknown) => unknown;
    readonly keepSent?: (envelope: object, payload: object, sent: string | Uint8Array) => void;
  };
}

/**
 * Every message type, its topic and payload schema. Events are named in the past tense,
 * commands in the imperative. See docs/messages.md.
 */
export const MessageTypes = {
  CommitObserved: {
    version: 1,
    accepts: [1],
    topic: Topics.commits,
    kind: 'event',
    payload: commitEventSchema,
  },
  ScanTable: {
    version: 1,
    accepts: [1],
    topic: Topics.scanRequests,
    kind: 'command',
    payload: scanRequestSchema,
  },
  TableScanned: {
    // Version 2: the partition list packed (ADR 0050). Producers write 1 until every planner
    // accepts 2; a scanner writes 2 when asked (createEnvelope's `version`).
    version: 1,
    accepts: [1, 2],
    topic: Topics.tableState,
    kind: 'event',
    payload: tableStateSchema,
    // ~0.5 ms of zod per state listing 100 partitions, more than planning it (issue 17).
    exact: isExactTableState,
    wire: {
      version: 2,
      plainVersion: 1,
      encode: packTableState,
      decode: unpackTableState,
      keepSent: keepPackedPartitionsJson,
    },
  },
  TaskPlanned: {
    version: 1,
    accepts: [1],
    topic: Topics.taskEvents,
    kind: 'event',
    payload: taskEventWithStatus(TaskStatus.planned),
  },
  TaskUpdated: {
    version: 1,
    accepts: [1],
    topic: Topics.taskEvents,
    kind: 'event',
    payload: taskEventWithStatus(TaskStatus.updated),
  },
  TaskSuperseded: {
    version: 1,
    accepts: [1],
    topic: Topics.taskEvents,
    kind: 'event',
    payload: taskEventWithStatus(TaskStatus.superseded),
  },
  TaskSkipped: {
    version: 1,
    accepts: [1],
    topic: Topics.taskEvents,
    kind: 'event',
    payload: taskEventWithStatus(TaskStatus.skipped),
  },
  TaskQueued: {
    version: 1,
    accepts: [1],
    topic: Topics.taskEvents,
    kind: 'event',
    payload: taskEventWithStatus(TaskStatus.queued),
  },
  TaskStarted: {
    version: 1,
    accepts: [1],
    topic: Topics.taskEvents,
    kind: 'event',
    payload: taskEventWithStatus(TaskStatus.started),
  },
  TaskSucceeded: {
    version: 1,
    accepts: [1],
    topic: Topics.taskEvents,
    kind: 'event',
    payload: taskEventWithStatus(TaskStatus.succeeded),
  },
  TaskFailed: {
    version: 1,
    accepts: [1],
    topic: Topics.taskEvents,
    kind: 'event',
    payload: taskEventWithStatus(TaskStatus.failed),
  },
  TaskCancelled: {
    version: 1,
    accepts: [1],
    topic: Topics.taskEvents,
    kind: 'event',
    payload: taskEventWithStatus(TaskStatus.cancelled),
  },
  TaskRetryScheduled: {
    version: 1,
    accepts: [1],
    topic: Topics.taskEvents,
    kind: 'event',
    payload: taskEventWithStatus(TaskStatus.retrying),
  },
  // Not a task's step (no status): a resident session's held idle tail, for the ledger (ADR
  // 0046). Consumers older than it dead-letter it as an unknown type.
  ResidentSessionEnded: {
    version: 1,
    accepts: [1],
    topic: Topics.taskEvents,
    kind: 'event',
    payload: sessionTailSchema,
  },
  CatalogDefined: {
    version: 1,
    accepts: [1],
    topic: Topics.catalogs,
    kind: 'event',
    // Published, so unknown keys are ignored (not rejected as in the API body).
    payload: publishedCatalogSchema,
  },
  BindingUpdated: {
    version: 1,
    accepts: [1],
    topic: Topics.bindings,
    kind: 'event',
    payload: publishedBindingSchema,
  },
  MessageDeadLettered: {
    version: 1,
    accepts: [1],
    topic: Topics.dlq,
    kind: 'event',
    payload: dlqRecordSchema,
  },
} as const satisfies Record<string, MessageTypeSpec>;

export type MessageType = keyof typeof MessageTypes;

/** Type names as constants: `MessageType.TableScanned === 'TableScanned'`. */
export const MessageType = Object.fromEntries(
  Object.keys(MessageTypes).map((name) => [name, name]),
) as {
  readonly [T in MessageType]: T;
};

export type MessagePayload<T extends MessageType> = z.output<(typeof MessageTypes)[T]['payload']>;

/** The task-event message type for each status. */
export const TaskEventTypes = {
  planned: 'TaskPlanned',
  updated: 'TaskUpdated',
  superseded: 'TaskSuperseded',
  skipped: 'TaskSkipped',
  queued: 'TaskQueued',
  started: 'TaskStarted',
  succeeded: 'TaskSucceeded',
  failed: 'TaskFailed',
  cancelled: 'TaskCancelled',
  retrying: 'TaskRetryScheduled',
} as const satisfies { readonly [S in TaskStatus]: MessageType };
