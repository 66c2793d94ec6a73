import type { EnvelopeProducer } from '@icepack/runtime';
import {
  MessageTypes,
  ScanReason,
  tableKey,
  TaskEventTypes,
  Topics,
  type TableId,
  type TaskEvent,
} from '@icepack/types';

/** Where the dispatcher reports: task events and re-scan requests. */
export interface DispatchSink {
  taskEvent(event: TaskEvent): Promise<void>;
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
  readonly scans: { table: TableId; taskId: string }[] = [];

  taskEvent(event: TaskEvent): Promise<void> {
    this.events.push(event);
    return Promise.resolve();
  }

  requestScan(table: TableId, taskId: string): Promise<void> {
    this.scans.push({ table, taskId });
    return Promise.resolve();
  }
}
