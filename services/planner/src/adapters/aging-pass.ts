import { randomUUID } from 'node:crypto';
import type { Logger } from '@icepack/runtime';
import type { Redis } from 'ioredis';
import type { ScoreOptions } from '../domain/score.ts';
import type { TableStateStore } from './state-store.ts';
import type { TaskQueue } from './task-queue.ts';

export interface AgingPassOptions {
  readonly queue: TaskQueue;
  readonly states: TableStateStore;
  /** For the lock. Required. */
  readonly connection: Redis;
  readonly scoreOptions: ScoreOptions;
  readonly logger: Logger;
  /** Time between passes, cluster-wide. Default 60 000 ms. */
  readonly intervalMs?: number;
  /** Redis key of the lock that elects the replica doing a pass. Default `icepack:planner:aging-lock`. */
  readonly lockKey?: string;
  /** Default `() => new Date()`. */
  readonly clock?: () => Date;
}

/**
 * Raises waiting tasks' priority with their wait time, on a timer in every replica. A
 * Redis lock (`SET NX PX interval`) lets one replica per interval do the pass; if that
 * replica dies, the lock expires and another takes the next one. A job scheduler would
 * need a worker of its own; a lock is simpler and just as safe for an idempotent pass.
 */
export class AgingPass {
  readonly #o: Required<AgingPassOptions>;
  readonly #id = randomUUID();
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<unknown> | undefined;

  constructor(options: AgingPassOptions) {
    this.#o = {
      intervalMs: 60_000,
      lockKey: 'icepack:planner:aging-lock',
      clock: () => new Date(),
      ...options,
    };
  }

  start(): void {
    this.#timer = setInterval(() => {
      if (this.#running !== undefined) return;
      this.#running = this.runOnce()
        .catch((error: unknown) =>
          this.#o.logger.warn({ err: error }, 'aging pass failed; next interval retries'),
        )
        .finally(() => (this.#running = undefined));
    }, this.#o.intervalMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#running;
  }

  /** One pass if this replica wins the lock: the number of tasks raised, or null. */
  async runOnce(): Promise<number | null> {
    const won = await this.#o.connection.set(
      this.#o.lockKey,
      this.#id,
      'PX',
      this.#o.intervalMs,
      'NX',
    );
    if (won !== 'OK') return null;
    const now = this.#o.clock();
    let raised = 0;
    for (const catalog of await this.#o.states.catalogs()) {
      raised += await this.#o.queue.age(catalog, now, this.#o.scoreOptions);
    }
    if (raised > 0) this.#o.logger.info({ raised }, 'aging pass raised waiting tasks');
    return raised;
  }
}
