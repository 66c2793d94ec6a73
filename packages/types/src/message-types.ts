import type { z } from 'zod';
import { commitEventSchema } from './commit-event.ts';
import { dlqRecordSchema } from './dlq-record.ts';
import { scanRequestSchema } from './scan-request.ts';
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
