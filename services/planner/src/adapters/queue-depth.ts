import type { Logger } from '@icepack/runtime';
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
}

/** The `state` label: what BullMQ keeps, folded into what an operator asks about. */
export const QueueState = {
  /** Waiting for a slot, in priority order (BullMQ `prioritized` and `wait`). */
  waiting: 'waiting',
  /** Put back for a while: waiting for quota or a retry backoff (BullMQ `delayed`). */
  delayed: 'delayed',
  /** Taken by a dispatcher: running, or being checked against the quota. */
  active: 'active',
} as const;
export type QueueState = (typeof QueueState)[keyof typeof QueueState];

type Depth = Readonly<Record<QueueState, number>>;

/**
 * `icepack.planner.queue.tasks{catalog, state}`: tasks in each catalog's queue. Measured on
 * an interval — one small Lua script per catalog, sent together — and the gauge reports the
 * last measurement, so scrapes cost nothing and hundreds of catalogs stay cheap. While Redis
 * cannot be reached the last figures stay (the SDK keeps a series' last value anyway); the
 * planner's `/readyz` names `redis` meanwhile.
 */
export class QueueDepth {
  readonly #o: Required<QueueDepthOptions>;
  #depth = new Map<string, Depth>();
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;
  #failing = false;

  constructor(options: QueueDepthOptions) {
    this.#o = { intervalMs: 15_000, ...options };
    options.meter
      .createObservableGauge('icepack.planner.queue.tasks', {
        description: 'Tasks in the catalog queue, by state (last measurement)',
      })
      .addCallback((result) => {
        for (const [catalog, depth] of this.#depth) {
          for (const state of Object.values(QueueState)) {
            result.observe(depth[state], { catalog, state });
          }
        }
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
      const depths = await Promise.all(
        catalogs.map(async (catalog) => [catalog, await this.#depthOf(catalog)] as const),
      );
      this.#depth = new Map(depths);
      this.#failing = false;
    } catch (error) {
      // Redis down is reported by /readyz; say it here once per outage, not every interval.
      if (!this.#failing) this.#o.logger.warn({ err: error }, 'queue depth not measured');
      this.#failing = true;
    }
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
