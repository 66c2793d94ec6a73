import type { EnvelopeProducer } from '@icepack/runtime';
import {
  MessageTypes,
  ScanReason,
  tableKey,
  TaskEventTypes,
  Topics,
  type SessionTail,
  type TableId,
  type TaskEvent,
} from '@icepack/types';

/** Where the dispatcher reports: task events, resident sessions' idle tails and re-scan requests. */
export interface DispatchSink {
  taskEvent(event: TaskEvent): Promise<void>;
  /** A resident session's idle tail (ADR 0046); a sink without it drops them (tests). */
  sessionTail?(tail: SessionTail): Promise<void>;
  requestScan(table: TableId, taskId: string): Promise<void>;
}

/** Publishes to `icepack.task-events` and `icepack.scan-requests`, keyed by table. */
export class KafkaDispatchSink implements DispatchSink {
  readonly #producer: EnvelopeProducer;

  constructor(producer: EnvelopeProducer) {
    this.#producer = producer;
  }

  async taskEvent(event: TaskEvent): Promise<void> {
    const type = TaskEventTypes[event.status];
    await this.#producer.publish(MessageTypes[type].topic, type, tableKey(event.table), event);
  }

  async sessionTail(tail: SessionTail): Promise<void> {
    const type = 'ResidentSessionEnded';
    await this.#producer.publish(MessageTypes[type].topic, type, tableKey(tail.table), tail);
  }

  async requestScan(table: TableId, taskId: string): Promise<void> {
    await this.#producer.publish(Topics.scanRequests, 'ScanTable', tableKey(table), {
      table,
      reason: ScanReason.afterTask,
      requestedAt: new Date().toISOString(),
      cause: { taskId },
    });
  }
}

/** Keeps what would be published: for unit tests and the benchmark. */
export class InMemoryDispatchSink implements DispatchSink {
  readonly events: TaskEvent[] = [];
  readonly tails: SessionTail[] = [];
  readonly scans: { table: TableId; taskId: string }[] = [];

  taskEvent(event: TaskEvent): Promise<void> {
    this.events.push(event);
    return Promise.resolve();
  }

  sessionTail(tail: SessionTail): Promise<void> {
    this.tails.push(tail);
    return Promise.resolve();
  }

  requestScan(table: TableId, taskId: string): Promise<void> {
    this.scans.push({ table, taskId });
    return Promise.resolve();
  }
}
