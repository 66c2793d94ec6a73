import { Kafka, logLevel, type Consumer } from 'kafkajs';
import { assertEventLifecycle, Topics, type SessionTail, type TaskEvent } from '@icepack/types';

/**
 * Reads `icepack.task-events` from the start and keeps the events of matching tasks, and
 * apart the resident sessions' idle tails of matching tables (`ResidentSessionEnded`).
 */
export class TaskEventLog {
  readonly events: TaskEvent[] = [];
  readonly tails: SessionTail[] = [];
  readonly #consumer: Consumer;
  readonly #match: (event: Pick<TaskEvent, 'taskId' | 'table'>) => boolean;

  constructor(
    brokers: readonly string[],
    match: (event: Pick<TaskEvent, 'taskId' | 'table'>) => boolean,
  ) {
    const kafka = new Kafka({
      brokers: [...brokers],
      clientId: 'dispatch-test',
      logLevel: logLevel.NOTHING,
    });
    this.#consumer = kafka.consumer({
      groupId: `dispatch-test-${String(Date.now())}-${String(Math.random())}`,
    });
    this.#match = match;
  }

  async start(): Promise<void> {
    await this.#consumer.connect();
    await this.#consumer.subscribe({ topic: Topics.taskEvents, fromBeginning: true });
    await this.#consumer.run({
      eachMessage: ({ message }) => {
        if (message.value !== null) {
          const envelope = JSON.parse(message.value.toString()) as
            | { type: 'ResidentSessionEnded'; payload: SessionTail }
            | { type: string; payload: TaskEvent };
          if (!this.#match(envelope.payload)) return Promise.resolve();
          if (envelope.type === 'ResidentSessionEnded')
            this.tails.push(envelope.payload as SessionTail);
          else this.events.push(envelope.payload as TaskEvent);
        }
        return Promise.resolve();
      },
    });
  }

  of(taskId: string): TaskEvent[] {
    return this.events.filter((e) => e.taskId === taskId);
  }

  /** Throws unless the task's events so far follow the lifecycle (`assertEventLifecycle`). */
  expectLifecycle(taskId: string): void {
    assertEventLifecycle(this.of(taskId));
  }

  /** Resolves with the task's first event in `statuses`; polls (no timing assertions). */
  async waitFor(
    taskId: string,
    statuses: readonly string[],
    timeoutMs = 600_000,
  ): Promise<TaskEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = this.of(taskId).find((e) => statuses.includes(e.status));
      if (hit !== undefined) return hit;
      if (Date.now() > deadline)
        throw new Error(
          `no ${statuses.join('/')} event for ${taskId}; saw ${JSON.stringify(this.of(taskId).map((e) => e.status))}`,
        );
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  async stop(): Promise<void> {
    await this.#consumer.disconnect();
  }
}
