import { tableKey, TaskEventTypes, Topics, type TaskEvent } from '@icepack/types';

/** Where the planner's task events go. */
export interface TaskEventSink {
  publish(event: TaskEvent): Promise<void>;
}

/** The part of the runtime's `EnvelopeProducer` the sink needs. */
export interface EnvelopePublisher {
  publish(
    topic: string,
    type: (typeof TaskEventTypes)[keyof typeof TaskEventTypes],
    key: string,
    payload: TaskEvent,
  ): Promise<unknown>;
}

/** Publishes each event on `icepack.task-events`, keyed by table, typed by status. */
export class KafkaTaskEventSink implements TaskEventSink {
  readonly #producer: EnvelopePublisher;
  readonly #topic: string;

  constructor(producer: EnvelopePublisher, topic: string = Topics.taskEvents) {
    this.#producer = producer;
    this.#topic = topic;
  }

  async publish(event: TaskEvent): Promise<void> {
    await this.#producer.publish(
      this.#topic,
      TaskEventTypes[event.status],
      tableKey(event.table),
      event,
    );
  }
}

/** Keeps events in memory: a test double and the benchmark's sink. */
export class InMemoryTaskEventSink implements TaskEventSink {
  readonly events: TaskEvent[] = [];

  publish(event: TaskEvent): Promise<void> {
    this.events.push(event);
    return Promise.resolve();
  }
}
