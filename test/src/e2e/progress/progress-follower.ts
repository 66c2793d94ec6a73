import { randomUUID } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import type { Consumer } from 'kafkajs';
import { MessageType, parseMessage, TaskEventTypes, Topics } from '@icepack/types';
import type { SessionTail, TableState, TaskEvent } from '@icepack/types';
import { ProgressLines } from './progress-lines.ts';

export interface ProgressFollowerOptions {
  readonly brokers: readonly string[];
  /** Where each line goes, with when it happened. Required. */
  readonly print: (line: string, at: Date) => void;
  /** Default `icepack.table-state`. */
  readonly tableStateTopic?: string;
  /** Default `icepack.task-events`. */
  readonly taskEventsTopic?: string;
  /** Skip task events that happened before this instant. Default: show all. */
  readonly since?: Date;
}

// Task events, and resident sessions' idle tails published beside them (ADR 0046).
const TASK_EVENT_TYPES = [...Object.values(TaskEventTypes), MessageType.ResidentSessionEnded];

/**
 * Reads table states and task events from the beginning, in a consumer group of its own
 * that it deletes on stop: a follower is a reader, it must not hold offsets or write a DLQ.
 * A message it cannot read is shown as such and skipped.
 */
export class ProgressFollower {
  readonly #o: ProgressFollowerOptions;
  readonly #kafka: Kafka;
  readonly #groupId = `icepack-progress-${randomUUID().slice(0, 8)}`;
  readonly #lines = new ProgressLines();
  #consumer: Consumer | undefined;

  constructor(options: ProgressFollowerOptions) {
    this.#o = options;
    this.#kafka = new Kafka({
      clientId: 'icepack-progress',
      brokers: [...options.brokers],
      logLevel: logLevel.NOTHING,
    });
  }

  async start(): Promise<void> {
    const tableState = this.#o.tableStateTopic ?? Topics.tableState;
    const taskEvents = this.#o.taskEventsTopic ?? Topics.taskEvents;
    const consumer = this.#kafka.consumer({ groupId: this.#groupId });
    this.#consumer = consumer;
    await consumer.connect();
    await consumer.subscribe({ topics: [tableState, taskEvents], fromBeginning: true });
    await consumer.run({
      eachMessage: ({ topic, message }) => {
        const key = message.key?.toString('utf8') ?? '';
        const line =
          topic === tableState
            ? tableStateLine(this.#lines, key, message.value)
            : taskEventLine(this.#lines, message.value, this.#o.since);
        // Kafka's timestamp is when it was published: right for replayed history too.
        if (line !== undefined) this.#o.print(line, new Date(Number(message.timestamp)));
        return Promise.resolve();
      },
    });
  }

  async stop(): Promise<void> {
    const consumer = this.#consumer;
    if (consumer === undefined) return;
    await consumer.disconnect();
    const admin = this.#kafka.admin();
    try {
      await admin.connect();
      await admin.deleteGroups([this.#groupId]);
    } catch {
      // The group expires on its own; nothing depends on it.
    } finally {
      await admin.disconnect();
    }
  }
}

/** The line of a table-state message (a tombstone: the table is gone); unreadable: says so. */
export function tableStateLine(
  lines: ProgressLines,
  key: string,
  value: Buffer | null,
): string | undefined {
  if (value === null || value.length === 0) return lines.tableState(key, null);
  try {
    const message = parseMessage(value, [MessageType.TableScanned]);
    return lines.tableState(key, message.payload as TableState);
  } catch (error) {
    return `(unreadable table state for ${key}: ${(error as Error).message})`;
  }
}

/**
 * The line of a task-events message: a task event, or a resident session's idle tail (ADR
 * 0046); none for one that happened before `since`; unreadable: says so.
 */
export function taskEventLine(
  lines: ProgressLines,
  value: Buffer | null,
  since?: Date,
): string | undefined {
  if (value === null) return undefined;
  try {
    const message = parseMessage(value, TASK_EVENT_TYPES);
    const event = message.payload as TaskEvent | SessionTail;
    if (since !== undefined && Date.parse(event.at) < since.getTime()) return undefined;
    return message.type === MessageType.ResidentSessionEnded
      ? lines.sessionTail(event as SessionTail)
      : lines.taskEvent(event as TaskEvent);
  } catch (error) {
    return `(unreadable task event: ${(error as Error).message})`;
  }
}
