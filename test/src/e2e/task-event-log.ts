import { randomUUID } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import type { Consumer } from 'kafkajs';
import {
  assertEventLifecycle,
  MessageType,
  parseMessage,
  TaskEventTypes,
  Topics,
} from '@icepack/types';
import type { SessionTail, TaskEvent } from '@icepack/types';
import { ProgressLines } from './progress/progress-lines.ts';

/**
 * Every task event on `icepack.task-events` from the beginning, parsed, plus the progress
 * line a person following `./dev up` would have seen for it; and apart, the resident
 * sessions' idle tails published there (`ResidentSessionEnded`, ADR 0046: not task events).
 */
export class TaskEventLog {
  readonly events: TaskEvent[] = [];
  readonly tails: SessionTail[] = [];
  /** The trace id in each event's `traceparent` header (same index as `events`). */
  readonly traceIds: (string | undefined)[] = [];
  readonly lines: string[] = [];
  /** Messages that were not valid task events (the test asserts there are none). */
  readonly invalid: string[] = [];
  readonly #consumer: Consumer;
  readonly #progress = new ProgressLines();

  private constructor(consumer: Consumer) {
    this.#consumer = consumer;
  }

  static async start(brokers: readonly string[]): Promise<TaskEventLog> {
    const kafka = new Kafka({ brokers: [...brokers], clientId: 'e2e', logLevel: logLevel.NOTHING });
    const consumer = kafka.consumer({ groupId: `e2e-${randomUUID()}`, maxWaitTimeInMs: 200 });
    const log = new TaskEventLog(consumer);
    await consumer.connect();
    await consumer.subscribe({ topic: Topics.taskEvents, fromBeginning: true });
    await consumer.run({
      eachMessage: ({ message }) => {
        try {
          const envelope = parseMessage(message.value ?? '', [
            ...Object.values(TaskEventTypes),
            MessageType.ResidentSessionEnded,
          ]);
          if (envelope.type === MessageType.ResidentSessionEnded) {
            log.tails.push(envelope.payload);
            return Promise.resolve();
          }
          const event = envelope.payload as TaskEvent;
          log.events.push(event);
          log.traceIds.push(message.headers?.traceparent?.toString().split('-')[1]);
          const line = log.#progress.taskEvent(event);
          if (line !== undefined) log.lines.push(line);
        } catch (error) {
          log.invalid.push((error as Error).message);
        }
        return Promise.resolve();
      },
    });
    return log;
  }

  /**
   * Each task id whose events so far break the task lifecycle (`assertEventLifecycle`: in
   * the order they happened, a repeat a no-op), with the error and its events; empty when all
   * follow it.
   */
  lifecycleViolations(): string[] {
    const violations: string[] = [];
    for (const [taskId, events] of Map.groupBy(this.events, (event) => event.taskId)) {
      try {
        assertEventLifecycle(events);
      } catch (error) {
        violations.push(`${taskId}: ${(error as Error).message}`);
      }
    }
    return violations;
  }

  /** Events of one table (by name), oldest first. */
  forTable(name: string): TaskEvent[] {
    return this.events.filter((event) => event.table.name === name);
  }

  stop(): Promise<void> {
    return this.#consumer.disconnect();
  }
}

/** Polls `probe` until it returns a value other than undefined/false, or fails naming `what`. */
export async function until<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  timeoutMs: number,
  describe: () => string = () => '',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${describe()}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
