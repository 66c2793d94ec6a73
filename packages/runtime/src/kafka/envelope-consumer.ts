import { context, metrics, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Counter, Span, Tracer } from '@opentelemetry/api';
import { dlqKey, dlqRecordFrom, parseMessage, Topics } from '@icepack/types';
import type { MessageEnvelope, MessageType } from '@icepack/types';
import type { Consumer, EachBatchPayload, IHeaders, KafkaMessage } from 'kafkajs';
import type { Logger } from 'pino';
import { lazyChild } from '../logger/lazy-child.ts';
import { backoffDelay, sleep } from '../retry/backoff.ts';
import type { BackoffOptions } from '../retry/backoff.ts';
import { Attr } from '../telemetry/attributes.ts';
import { extractContext } from '../telemetry/trace-context.ts';
import type { EnvelopeProducer } from './envelope-producer.ts';
import { isUnrecoverable } from './handler-errors.ts';
import type { KafkaClient } from './kafka-client.ts';

/** Where a message came from and how often it was tried; passed to every handler. */
export interface MessageContext {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly key: string | null;
  readonly headers: IHeaders;
  /** 1 on first delivery to this process, 2 after one failure, … */
  readonly attempt: number;
  /** The consumer's logger with topic, partition, offset and message id bound. */
  readonly logger: Logger;
}

export type MessageHandler<T extends MessageType> = (
  message: MessageEnvelope<T>,
  context: MessageContext,
) => Promise<void> | void;

/** One handler per message type the consumer accepts; other types go to the DLQ. */
export type MessageHandlers = { readonly [T in MessageType]?: MessageHandler<T> };

export interface EnvelopeConsumerOptions {
  /** Consumer group. Required. */
  readonly groupId: string;
  /** Topics to read. Required. */
  readonly topics: readonly string[];
  /** Handlers by message type. Required, at least one. */
  readonly handlers: MessageHandlers;
  /** Called for a null value (compacted-topic delete). Default: tombstones are skipped. */
  readonly onTombstone?: (key: string | null, context: MessageContext) => Promise<void> | void;
  /** Sends DLQ records. Required. */
  readonly producer: EnvelopeProducer;
  /** Where undeliverable messages go. Default `icepack.dlq`. */
  readonly dlqTopic?: string;
  /** A new group starts at the earliest offset (true) or only sees new messages. Default true. */
  readonly fromBeginning?: boolean;
  /** Redelivery delay after a handler failure. Default 500 ms doubling to 60 s, jittered. */
  readonly retry?: BackoffOptions;
  /**
   * Failures of one message (in this process) after which it goes to the DLQ with
   * `handler failed after N attempts: …`. Default Infinity: a failing message blocks its
   * partition (other partitions go on) and is retried until it succeeds, so an outage of
   * a dependency never dead-letters valid work.
   */
  readonly maxAttempts?: number;
  /** Partitions handled at the same time (order is kept within each). Default 1. */
  readonly partitionsConsumedConcurrently?: number;
  /**
   * Messages of one partition handled at the same time, of different keys: a key's messages
   * are handled one after another, in offset order (ADR 0052). An offset is committed only
   * once every message before it is handled; a handler failure stops new messages from
   * starting, lets those in flight finish, and after the backoff the partition is fetched
   * again from the first unhandled message — the ones after it that were handled meanwhile
   * are not handled again by this process. Default 1 (one message at a time).
   */
  readonly messagesInFlight?: number;
  /**
   * Bytes of one partition fetched at once (kafkajs `maxBytesPerPartition`). With
   * `messagesInFlight` > 1 a fetched batch's end waits for its slowest handling before the next
   * fetch: larger batches leave fewer such gaps. A fetch then holds up to this much of each of
   * `partitionsConsumedConcurrently` partitions (at least kafkajs's 10 MiB in all). Default
   * kafkajs's, 1 MiB.
   */
  readonly maxBytesPerPartition?: number;
  /**
   * How often handled offsets are committed while a batch is worked through; 0 commits after
   * every message. They are also committed at the end of each fetched batch, before a
   * partition pauses for a retry, and on `stop()`. A crash redelivers what was handled since
   * the last commit — at most this long's worth — so handlers must be idempotent (they
   * already must: a crash between effect and commit redelivers too). Default 1000 ms.
   */
  readonly commitIntervalMs?: number;
  /** Group session timeout. Default 30 000 ms. */
  readonly sessionTimeoutMs?: number;
  /** Default the global tracer `@icepack/runtime`. */
  readonly tracer?: Tracer;
}

/** What became of one delivery; the `outcome` label of `icepack.kafka.messages`. */
export const MessageOutcome = {
  handled: 'handled',
  retry: 'retry',
  deadLettered: 'dead-lettered',
  tombstoneSkipped: 'tombstone-skipped',
} as const;
export type MessageOutcome = (typeof MessageOutcome)[keyof typeof MessageOutcome];

/**
 * Why a message went to the DLQ, as a class: the `icepack.dlq.reason` label of
 * `icepack.kafka.messages` (the record itself carries the full reason).
 */
export const DlqReason = {
  /** Not JSON, not an envelope, a type without a handler, or an invalid payload. */
  invalidMessage: 'invalid-message',
  /** The handler threw an unrecoverable error (`UnrecoverableMessageError`, `ValidationError`). */
  unrecoverable: 'unrecoverable',
  /** The handler failed `maxAttempts` times. */
  maxAttempts: 'max-attempts',
} as const;
export type DlqReason = (typeof DlqReason)[keyof typeof DlqReason];

type Outcome = { readonly kind: 'done' } | { readonly kind: 'retry'; readonly delayMs: number };
const DONE: Outcome = { kind: 'done' };

/**
 * Reads Icepack envelopes with at-least-once delivery:
 *
 * - An offset is committed only after its message's handler resolved (or the message was
 *   written to the DLQ), one partition in order; commits are batched (`commitIntervalMs`).
 * - A message that is not JSON, not a valid envelope, of a type without a handler, or with
 *   an invalid payload goes to the DLQ with the reason naming the field; the consumer goes on.
 * - A handler that throws: its partition pauses, and after a backoff the same message is
 *   fetched again (nothing after it is committed). `UnrecoverableMessageError`,
 *   `ValidationError` or `maxAttempts` failures send it to the DLQ instead.
 * - Each message is handled in a span continuing the producer's trace from its headers.
 * - A crashed kafkajs consumer is restarted with backoff; `stop()` lets the handler in
 *   flight finish and commit before leaving the group.
 */
/**
 * A fetched batch's handled offsets: resolved as they are handled, committed at the end, before
 * a pause, and in between once `intervalMs` has passed since the last commit.
 */
class BatchOffsets {
  readonly #payload: EachBatchPayload;
  readonly #intervalMs: number;
  /** The offset after the last handled message, not yet committed. */
  #pending: string | undefined;
  #lastCommit = Date.now();

  constructor(payload: EachBatchPayload, intervalMs: number) {
    this.#payload = payload;
    this.#intervalMs = intervalMs;
  }

  /** `offset` is handled, and so is every offset of the batch before it. */
  handled(offset: string): void {
    this.#payload.resolveOffset(offset);
    this.#pending = next(offset);
  }

  async commitIfDue(): Promise<void> {
    if (Date.now() - this.#lastCommit >= this.#intervalMs) await this.commit();
  }

  async commit(): Promise<void> {
    const offset = this.#pending;
    if (offset === undefined) return;
    const { topic, partition } = this.#payload.batch;
    await this.#payload.commitOffsetsIfNecessary({
      topics: [{ topic, partitions: [{ partition, offset }] }],
    });
    // Handlings still in flight may have moved it on meanwhile.
    if (this.#pending === offset) this.#pending = undefined;
    this.#lastCommit = Date.now();
  }
}

export class EnvelopeConsumer {
  readonly #client: KafkaClient;
  readonly #options: EnvelopeConsumerOptions;
  readonly #logger: Logger;
  readonly #tracer: Tracer;
  readonly #messages: Counter;
  readonly #dlqTopic: string;
  readonly #expected: MessageType[];
  readonly #attempts = new Map<string, number>();
  /**
   * Per `topic/partition`: offsets past the first unhandled message that were handled (with
   * `messagesInFlight` > 1), skipped when that partition is fetched again. Cleared when the
   * group rebalances: whoever owns the partition next gets them again (at least once).
   */
  readonly #handledAhead = new Map<string, Set<string>>();
  readonly #resumeTimers = new Set<NodeJS.Timeout>();
  readonly #stopping = new AbortController();
  #consumer: Consumer | undefined;
  #running = false;
  #starts = 0;

  constructor(client: KafkaClient, options: EnvelopeConsumerOptions) {
    this.#client = client;
    this.#options = options;
    this.#logger = client.logger.child({ groupId: options.groupId });
    this.#tracer = options.tracer ?? trace.getTracer('@icepack/runtime');
    this.#messages = metrics
      .getMeter('@icepack/runtime')
      .createCounter('icepack.kafka.messages', { description: 'Kafka messages by outcome' });
    this.#dlqTopic = options.dlqTopic ?? Topics.dlq;
    this.#expected = Object.keys(options.handlers) as MessageType[];
    if (this.#expected.length === 0 && options.onTombstone === undefined) {
      throw new Error('EnvelopeConsumer: give at least one handler');
    }
  }

  /** True while a kafkajs consumer is running in the group. */
  get running(): boolean {
    return this.#running;
  }

  /**
   * Joins the group and starts consuming. Retries with backoff until it succeeds or
   * {@link stop} is called; resolves then. Never rejects on a broker outage.
   */
  async start(): Promise<void> {
    const component = `consumer ${this.#options.groupId}`;
    for (let attempt = 1; !this.#stopping.signal.aborted; attempt++) {
      try {
        await this.#startOnce();
        this.#client.setUnhealthy(component, null);
        return;
      } catch (error) {
        this.#client.recordError(component, error);
        this.#client.setUnhealthy(component, `not started: ${(error as Error).message}`);
        const delay = backoffDelay(attempt, { initialMs: 1_000, maxMs: 30_000 });
        this.#logger.warn(
          { err: error, attempt, delayMs: delay },
          'consumer failed to start; retrying',
        );
        await this.#discard();
        await sleep(delay, this.#stopping.signal);
      }
    }
  }

  /** Waits for the handler in flight, commits its offset, leaves the group. */
  async stop(): Promise<void> {
    this.#stopping.abort();
    for (const timer of this.#resumeTimers) clearTimeout(timer);
    this.#resumeTimers.clear();
    const consumer = this.#consumer;
    this.#consumer = undefined;
    this.#running = false;
    if (consumer !== undefined) {
      await consumer.stop();
      await consumer.disconnect();
    }
    this.#client.setUnhealthy(`consumer ${this.#options.groupId}`, null);
  }

  async #startOnce(): Promise<void> {
    const { groupId } = this.#options;
    const component = `consumer ${groupId}`;
    const consumer = this.#client.kafka.consumer({
      groupId,
      sessionTimeout: this.#options.sessionTimeoutMs ?? 30_000,
      heartbeatInterval: 3_000,
      // How long an idle fetch waits for data; also bounds how late a resumed partition
      // (after a handler failure) is fetched again. Default 5 s in kafkajs.
      maxWaitTimeInMs: 1_000,
      ...fetchLimits(this.#options),
      // kafkajs restarts after retriable crashes; the CRASH listener handles the rest.
      retry: { restartOnFailure: () => Promise.resolve(true) },
    });
    this.#consumer = consumer;
    this.#starts++;
    consumer.on(consumer.events.GROUP_JOIN, (event) => {
      this.#attempts.clear();
      this.#handledAhead.clear();
      this.#client.setUnhealthy(component, null);
      this.#logger.info({ assignment: event.payload.memberAssignment }, 'joined consumer group');
    });
    consumer.on(consumer.events.CRASH, (event) => {
      const { error, restart } = event.payload;
      this.#client.recordError(component, error);
      this.#client.setUnhealthy(component, `crashed: ${error.message}`);
      this.#logger.error({ err: error, restart }, 'consumer crashed');
      // kafkajs gives up on errors it deems fatal; a service must not, so start a new one.
      if (!restart && !this.#stopping.signal.aborted && this.#consumer === consumer) {
        this.#consumer = undefined;
        this.#running = false;
        void this.start();
      }
    });
    await consumer.connect();
    await consumer.subscribe({
      topics: [...this.#options.topics],
      fromBeginning: this.#options.fromBeginning ?? true,
    });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: this.#options.partitionsConsumedConcurrently ?? 1,
      eachBatch: (payload) => this.#eachBatch(payload),
    });
    this.#running = true;
    this.#logger.info({ topics: this.#options.topics, starts: this.#starts }, 'consumer running');
  }

  async #discard(): Promise<void> {
    const consumer = this.#consumer;
    this.#consumer = undefined;
    await consumer?.disconnect().catch(() => undefined);
  }

  async #eachBatch(payload: EachBatchPayload): Promise<void> {
    const inFlight = this.#options.messagesInFlight ?? 1;
    if (inFlight > 1) return this.#eachBatchInFlight(payload, inFlight);
    const { topic, partition } = payload.batch;
    const offsets = new BatchOffsets(payload, this.#options.commitIntervalMs ?? 1_000);
    for (const message of payload.batch.messages) {
      if (payload.isStale()) return; // the partition went to another member: not ours to commit
      if (!payload.isRunning()) return offsets.commit();
      const outcome = await this.#handle(topic, partition, message);
      if (outcome.kind === 'retry') {
        // What came before it is done; this message is not resolved: when the partition
        // resumes, the fetch starts at it again.
        await offsets.commit();
        this.#pauseFor(payload, outcome.delayMs);
        return;
      }
      offsets.handled(message.offset);
      await offsets.commitIfDue();
      await payload.heartbeat();
    }
    if (!payload.isStale()) await offsets.commit();
  }

  /** Pauses the batch's partition for `delayMs`; the fetch then starts at its first unresolved message. */
  #pauseFor(payload: EachBatchPayload, delayMs: number): void {
    const resume = payload.pause();
    const timer = setTimeout(() => {
      this.#resumeTimers.delete(timer);
      resume();
    }, delayMs);
    this.#resumeTimers.add(timer);
  }

  /**
   * `#eachBatch` with up to `inFlight` messages handled at once, different keys only: a
   * message waits for the one before it of its key. Offsets are resolved and committed up to
   * the first unhandled message only.
   */
  async #eachBatchInFlight(payload: EachBatchPayload, inFlight: number): Promise<void> {
    const { topic, partition, messages } = payload.batch;
    const offsets = new BatchOffsets(payload, this.#options.commitIntervalMs ?? 1_000);
    const aheadKey = `${topic}/${partition}`;
    const ahead = this.#handledAhead.get(aheadKey) ?? new Set<string>();
    this.#handledAhead.set(aheadKey, ahead);
    const done = messages.map((m) => ahead.delete(m.offset));
    // The index of the first unhandled message; what is before it is resolved.
    let first = 0;
    const advance = (): void => {
      while (first < messages.length && done[first] === true) {
        offsets.handled(messages[first]!.offset);
        first++;
      }
    };
    // Set by the first failure: nothing starts after it.
    let retryDelayMs: number | undefined;
    const stopped = () => retryDelayMs !== undefined || payload.isStale() || !payload.isRunning();
    // The last message started of each key: the next one of that key waits for it.
    const lastOfKey = new Map<string, Promise<boolean>>();
    const running = new Set<Promise<boolean>>();
    advance();
    for (const [i, message] of messages.entries()) {
      if (done[i] === true) continue; // handled before the partition was fetched again
      while (running.size >= inFlight) await Promise.race(running);
      if (stopped()) break;
      await offsets.commitIfDue();
      const key = message.key === null ? '' : message.key.toString('latin1');
      const before = lastOfKey.get(key);
      const handling = (async (): Promise<boolean> => {
        // Not after a failure of its key's message before it: order within a key holds.
        if (before !== undefined && !(await before)) return false;
        if (stopped()) return false;
        const outcome = await this.#handle(topic, partition, message);
        if (outcome.kind === 'retry') {
          retryDelayMs ??= outcome.delayMs;
          return false;
        }
        done[i] = true;
        advance();
        return true;
      })();
      lastOfKey.set(key, handling);
      running.add(handling);
      const settled = () => void running.delete(handling);
      handling.then(settled, settled);
      await payload.heartbeat();
    }
    await Promise.all(running);
    if (payload.isStale()) return; // the partition went to another member: not ours to commit
    // What was handled past the first unhandled message is not handled again on the re-fetch.
    for (let i = first; i < messages.length; i++)
      if (done[i] === true) ahead.add(messages[i]!.offset);
    await offsets.commit();
    if (retryDelayMs === undefined || !payload.isRunning()) return;
    this.#pauseFor(payload, retryDelayMs);
  }

  async #handle(topic: string, partition: number, message: KafkaMessage): Promise<Outcome> {
    const key = message.key === null ? null : message.key.toString('utf8');
    const headers = message.headers ?? {};
    const attemptKey = `${topic}/${partition}/${message.offset}`;
    const attempt = (this.#attempts.get(attemptKey) ?? 0) + 1;
    const parent = extractContext(headers);
    const span = this.#tracer.startSpan(
      `process ${topic}`,
      {
        kind: SpanKind.CONSUMER,
        attributes: {
          [Attr.messagingSystem]: 'kafka',
          [Attr.messagingOperation]: 'process',
          [Attr.messagingDestination]: topic,
          [Attr.messagingConsumerGroup]: this.#options.groupId,
          [Attr.kafkaPartition]: String(partition),
          [Attr.kafkaOffset]: message.offset,
          [Attr.icepackAttempt]: attempt,
          ...(key === null ? {} : { [Attr.kafkaMessageKey]: key }),
        },
      },
      parent,
    );
    const logger = lazyChild(this.#logger, { topic, partition, offset: message.offset, key });
    const ctx: MessageContext = {
      topic,
      partition,
      offset: message.offset,
      key,
      headers,
      attempt,
      logger,
    };
    try {
      return await context.with(trace.setSpan(parent, span), () =>
        this.#dispatch(message, ctx, span, attemptKey),
      );
    } finally {
      span.end();
    }
  }

  #outcome(span: Span, topic: string, outcome: MessageOutcome, dlqReason?: DlqReason): void {
    span.setAttribute(Attr.icepackOutcome, outcome);
    this.#messages.add(1, {
      [Attr.messagingDestination]: topic,
      [Attr.icepackOutcome]: outcome,
      ...(dlqReason === undefined ? {} : { [Attr.icepackDlqReason]: dlqReason }),
    });
  }

  async #dispatch(
    message: KafkaMessage,
    ctx: MessageContext,
    span: Span,
    attemptKey: string,
  ): Promise<Outcome> {
    let run: () => Promise<void> | void;
    if (message.value === null) {
      const onTombstone = this.#options.onTombstone;
      if (onTombstone === undefined) {
        this.#outcome(span, ctx.topic, MessageOutcome.tombstoneSkipped);
        return DONE;
      }
      span.setAttribute(Attr.icepackMessageType, 'tombstone');
      run = () => onTombstone(ctx.key, ctx);
    } else {
      let envelope: MessageEnvelope<MessageType>;
      try {
        envelope = parseMessage(message.value, this.#expected);
      } catch (error) {
        const reason = (error as Error).message;
        return this.#deadLetter(message, ctx, span, reason, DlqReason.invalidMessage, attemptKey);
      }
      span.setAttribute(Attr.icepackMessageType, envelope.type);
      span.setAttribute(Attr.messagingMessageId, envelope.id);
      const handler = this.#options.handlers[envelope.type] as MessageHandler<MessageType>;
      const handlerCtx = {
        ...ctx,
        logger: lazyChild(ctx.logger, { messageId: envelope.id, type: envelope.type }),
      };
      run = () => handler(envelope, handlerCtx);
    }

    try {
      await run();
      this.#attempts.delete(attemptKey);
      this.#outcome(span, ctx.topic, MessageOutcome.handled);
      return DONE;
    } catch (error) {
      span.recordException(error as Error);
      const maxAttempts = this.#options.maxAttempts ?? Infinity;
      if (isUnrecoverable(error)) {
        return this.#deadLetter(
          message,
          ctx,
          span,
          `handler failed: ${(error as Error).message}`,
          DlqReason.unrecoverable,
          attemptKey,
        );
      }
      if (ctx.attempt >= maxAttempts) {
        const reason = `handler failed after ${ctx.attempt} attempts: ${(error as Error).message}`;
        return this.#deadLetter(message, ctx, span, reason, DlqReason.maxAttempts, attemptKey);
      }
      this.#attempts.set(attemptKey, ctx.attempt);
      const delayMs = backoffDelay(
        ctx.attempt,
        this.#options.retry ?? { initialMs: 500, maxMs: 60_000 },
      );
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
      this.#outcome(span, ctx.topic, MessageOutcome.retry);
      ctx.logger.warn(
        { err: error, attempt: ctx.attempt, delayMs },
        'handler failed; will redeliver',
      );
      return { kind: 'retry', delayMs };
    }
  }

  async #deadLetter(
    message: KafkaMessage,
    ctx: MessageContext,
    span: Span,
    reason: string,
    reasonClass: DlqReason,
    attemptKey: string,
  ): Promise<Outcome> {
    const record = dlqRecordFrom(
      {
        topic: ctx.topic,
        partition: ctx.partition,
        offset: ctx.offset,
        key: message.key,
        value: message.value,
        headers: message.headers,
      },
      reason,
      this.#options.groupId,
    );
    span.setStatus({ code: SpanStatusCode.ERROR, message: reason });
    try {
      await this.#options.producer.publish(
        this.#dlqTopic,
        'MessageDeadLettered',
        dlqKey(record),
        record,
      );
    } catch (error) {
      // The message is neither handled nor parked: keep it uncommitted and try again.
      this.#attempts.set(attemptKey, ctx.attempt);
      const delayMs = backoffDelay(ctx.attempt, { initialMs: 1_000, maxMs: 30_000 });
      ctx.logger.error(
        { err: error, reason, delayMs },
        'could not write to the DLQ; will redeliver',
      );
      return { kind: 'retry', delayMs };
    }
    this.#attempts.delete(attemptKey);
    this.#outcome(span, ctx.topic, MessageOutcome.deadLettered, reasonClass);
    ctx.logger.warn({ reason, dlqTopic: this.#dlqTopic }, 'message sent to the DLQ');
    return DONE;
  }
}

function next(offset: string): string {
  return (BigInt(offset) + 1n).toString();
}

/** kafkajs's cap on one fetch's answer, all partitions together (its `maxBytes` default). */
const KAFKAJS_FETCH_MAX_BYTES = 10 * 1024 * 1024;

/**
 * kafkajs's fetch sizes for the options. The broker fills a fetch's answer partition after
 * partition, each up to `maxBytesPerPartition`, until `maxBytes` in all; so the total must hold
 * a batch of every partition handled at once. Left at kafkajs's 10 MiB, the planner's 8 MiB a
 * partition filled it with one partition's batch and part of a second: of its three partitions
 * handled at once, one waited for the next fetch, which waits for the slowest batch of this one.
 */
function fetchLimits(options: EnvelopeConsumerOptions): {
  readonly maxBytesPerPartition?: number;
  readonly maxBytes?: number;
} {
  const perPartition = options.maxBytesPerPartition;
  if (perPartition === undefined) return {};
  const partitions = options.partitionsConsumedConcurrently ?? 1;
  return {
    maxBytesPerPartition: perPartition,
    maxBytes: Math.max(KAFKAJS_FETCH_MAX_BYTES, perPartition * partitions),
  };
}
