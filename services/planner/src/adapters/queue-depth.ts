import { createInstruments, gauge, type Logger } from '@icepack/runtime';
import type { Meter } from '@opentelemetry/api';
import type { TaskQueue } from './task-queue.ts';

export interface QueueDepthOptions {
  readonly queue: TaskQueue;
  /** The catalogs whose queues are measured (the planner's set of catalogs seen). */
  readonly catalogs: () => Promise<readonly string[]>;
  readonly meter: Meter;
  readonly logger: Logger;
  /** Time between measurements; 0 measures never. Default 15 000 ms. */
  readonly intervalMs?: number;
  /** Default `() => new Date()`. */
  readonly clock?: () => Date;
}

/** The `state` label: what BullMQ keeps, folded into what an operator asks about. */
export const QueueState = {
  /**
   * Waiting for a slot, or for quota (ADR 0053: it keeps its place), in priority order
   * (BullMQ `prioritized` and `wait`).
   */
  waiting: 'waiting',
  /**
   * Put back for a while: a large task waiting for a large-task slot, or a retry backoff
   * (BullMQ `delayed`).
   */
  delayed: 'delayed',
  /** Taken by a dispatcher: running, or being checked against the quota. */
  active: 'active',
} as const;
export type QueueState = (typeof QueueState)[keyof typeof QueueState];

type Depth = Readonly<Record<QueueState, number>>;

interface Measurement {
  readonly depth: Depth;
  /** Seconds since the oldest waiting task was created; 0 when none waits. */
  readonly oldestAge: number;
}

const INSTRUMENTS = {
  tasks: gauge({
    name: 'icepack.planner.queue.tasks',
    description: 'Tasks in the catalog queue, by state (last measurement)',
    attributes: ['catalog', 'state'],
  }),
  oldestAge: gauge({
    name: 'icepack.planner.oldest_task.age.seconds',
    description:
      'Seconds since the oldest waiting task of the catalog queue was created (last measurement)',
    unit: 's',
    attributes: ['catalog'],
  }),
};

/**
 * `icepack.planner.queue.tasks{catalog, state}`: tasks in each catalog's queue, and
 * `icepack.planner.oldest_task.age.seconds{catalog}`: how long its oldest waiting task
 * (prioritized, wait, paused, or delayed for a large-task slot or a retry backoff; not
 * running) has waited since it was created. Measured on an interval — two small Lua scripts
 * per catalog, sent together — and the gauges report the last measurement, so scrapes cost
 * nothing and hundreds of catalogs stay cheap. While Redis cannot be reached the last figures
 * stay (the SDK keeps a series' last value anyway); the planner's `/readyz` names `redis`
 * meanwhile.
 */
export class QueueDepth {
  readonly #o: Required<QueueDepthOptions>;
  #measured = new Map<string, Measurement>();
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;
  #failing = false;

  constructor(options: QueueDepthOptions) {
    this.#o = { intervalMs: 15_000, clock: () => new Date(), ...options };
    const instruments = createInstruments(options.meter, INSTRUMENTS);
    instruments.tasks.addCallback((result) => {
      for (const [catalog, { depth }] of this.#measured) {
        for (const state of Object.values(QueueState)) {
          result.observe(depth[state], { catalog, state });
        }
      }
    });
    instruments.oldestAge.addCallback((result) => {
      for (const [catalog, { oldestAge }] of this.#measured) result.observe(oldestAge, { catalog });
    });
  }

  start(): void {
    if (this.#o.intervalMs <= 0) return;
    const tick = () => {
      this.#running = this.measure().finally(() => {
        this.#running = undefined;
        if (this.#stopped) return;
        this.#timer = setTimeout(tick, this.#o.intervalMs);
        this.#timer.unref();
      });
    };
    tick();
  }

  /** Stops measuring; waits for a measurement in flight. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }

  /** One measurement of every catalog's queue. */
  async measure(): Promise<void> {
    try {
      const catalogs = await this.#o.catalogs();
      const now = this.#o.clock();
      const measured = await Promise.all(
        catalogs.map(async (catalog) => [catalog, await this.#measure(catalog, now)] as const),
      );
      this.#measured = new Map(measured);
      this.#failing = false;
    } catch (error) {
      // Redis down is reported by /readyz; say it here once per outage, not every interval.
      if (!this.#failing) this.#o.logger.warn({ err: error }, 'queue depth not measured');
      this.#failing = true;
    }
  }

  async #measure(catalog: string, now: Date): Promise<Measurement> {
    const [depth, oldest] = await Promise.all([
      this.#depthOf(catalog),
      this.#o.queue.oldestWaiting(catalog, now),
    ]);
    // Not told this time (a backlog of finished entries being dropped): the last age stays.
    const oldestAge =
      oldest === undefined
        ? (this.#measured.get(catalog)?.oldestAge ?? 0)
        : oldest === null
          ? 0
          : Math.max(0, (now.getTime() - oldest) / 1000);
    return { depth, oldestAge };
  }

  async #depthOf(catalog: string): Promise<Depth> {
    const counts = await this.#o.queue
      .queue(catalog)
      .getJobCounts('prioritized', 'wait', 'delayed', 'active');
    const count = (type: string) => counts[type] ?? 0;
    return {
      waiting: count('prioritized') + count('wait'),
      delayed: count('delayed'),
      active: count('active'),
    };
  }
}
