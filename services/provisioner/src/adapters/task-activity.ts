import { BULLMQ_PREFIX, queueNameForCatalog } from '@icepack/types';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';

/** How many of a catalog's tasks are running now (a drain waits for zero). */
export interface TaskActivity {
  running(catalog: string): Promise<number>;
}

/** Reads the active count of the catalog's BullMQ queue, the one the dispatchers work on. */
export class BullmqTaskActivity implements TaskActivity {
  readonly #redis: Redis;
  readonly #prefix: string;

  constructor(redis: Redis, prefix = BULLMQ_PREFIX) {
    this.#redis = redis;
    this.#prefix = prefix;
  }

  async running(catalog: string): Promise<number> {
    const queue = new Queue(queueNameForCatalog(catalog), {
      connection: this.#redis,
      prefix: this.#prefix,
    });
    try {
      return await queue.getActiveCount();
    } finally {
      await queue.close();
    }
  }
}
