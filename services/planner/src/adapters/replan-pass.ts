import { randomUUID } from 'node:crypto';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { Logger } from '@icepack/runtime';
import { tableKey } from '@icepack/types';
import type { Redis } from 'ioredis';
import type { Planner } from './planner.ts';
import type { TableStateStore } from './state-store.ts';

export interface ReplanPassOptions {
  readonly planner: Pick<Planner, 'replan'>;
  readonly states: Pick<TableStateStore, 'page'>;
  /** For the lock. Required. */
  readonly connection: Redis;
  readonly logger: Logger;
  /** Time between passes, cluster-wide, ±10 % jitter. Default 600 000 ms (10 min). */
  readonly intervalMs?: number;
  /** States read per HSCAN page. Default 500. */
  readonly batchSize?: number;
  /** Tables re-planned at once within a page. Default 8. */
  readonly concurrency?: number;
  /** Redis key of the lock that elects the replica doing a pass. Default `icepack:planner:replan-lock`. */
  readonly lockKey?: string;
  /** Default `Math.random`. */
  readonly random?: () => number;
}

// Extends the lock while its holder is still this replica (a slow pass keeps it).
const EXTEND_LOCK = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
`;

export interface ReplanResult {
  readonly tables: number;
  readonly planned: number;
  readonly failed: number;
}

/**
 * Plans every stored table state again, on a timer in every replica: a task that failed or
 * was lost comes back although no new commit brings a new state (the after-task scan of an
 * unchanged table publishes nothing). A Redis lock (`SET NX PX interval`, extended while the
 * pass runs) lets one replica do each pass. The pass walks the stored states page by page
 * (HSCAN) with a few tables at once, so 100 000 tables cost one walk of Redis per interval,
 * not a burst; the timer's jitter keeps replicas from contending at the same instant.
 */
export class ReplanPass {
  readonly #o: Required<ReplanPassOptions>;
  readonly #id = randomUUID();
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<unknown> | undefined;
  #stopped = false;

  constructor(options: ReplanPassOptions) {
    this.#o = {
      intervalMs: 600_000,
      batchSize: 500,
      concurrency: 8,
      lockKey: 'icepack:planner:replan-lock',
      random: Math.random,
      ...options,
    };
  }

  start(): void {
    if (this.#stopped) return;
    const delay = this.#o.intervalMs * (0.9 + 0.2 * this.#o.random());
    this.#timer = setTimeout(() => {
      this.#running = this.runOnce()
        .catch((error: unknown) =>
          this.#o.logger.warn({ err: error }, 're-plan pass failed; the next interval retries'),
        )
        .finally(() => {
          this.#running = undefined;
          this.start();
        });
    }, delay);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }

  /** One pass if this replica wins the lock; null otherwise. */
  async runOnce(): Promise<ReplanResult | null> {
    const redis = this.#o.connection;
    const won = await redis.set(this.#o.lockKey, this.#id, 'PX', this.#o.intervalMs, 'NX');
    if (won !== 'OK') return null;
    let cursor = '0';
    let tables = 0;
    let planned = 0;
    let failed = 0;
    do {
      const page = await this.#o.states.page(cursor, this.#o.batchSize);
      cursor = page.cursor;
      const queue = [...page.states];
      const worker = async (): Promise<void> => {
        for (let state = queue.shift(); state !== undefined; state = queue.shift()) {
          tables += 1;
          try {
            // Awaited first: `planned += await …` would read the total before the await and
            // drop what the other workers added meanwhile.
            const { actions } = await this.#o.planner.replan(state);
            planned += actions.length;
          } catch (error) {
            failed += 1;
            this.#o.logger.warn(
              { err: error, table: tableKey(state.table) },
              're-plan of a table failed; the next pass tries again',
            );
          }
        }
      };
      await Promise.all(Array.from({ length: this.#o.concurrency }, worker));
      await redis.eval(EXTEND_LOCK, 1, this.#o.lockKey, this.#id, String(this.#o.intervalMs));
      await yieldToLoop();
    } while (cursor !== '0' && !this.#stopped);
    this.#o.logger.info({ tables, planned, failed }, 're-plan pass done');
    return { tables, planned, failed };
  }
}
