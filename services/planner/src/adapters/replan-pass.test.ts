import { setImmediate as tick } from 'node:timers/promises';
import { createLogger } from '@icepack/runtime';
import { sampleTableId, sampleTableState, type TableState } from '@icepack/types';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { ReplanPass } from './replan-pass.ts';

// The pass's counts with tables re-planned several at once: each worker's result must add up
// (a `planned += await …` reads the total before the await and loses the others' additions).
describe('ReplanPass.runOnce', () => {
  it('counts every table and every action when tables are re-planned concurrently', async () => {
    const states: TableState[] = Array.from({ length: 20 }, (_, i) =>
      sampleTableState({ table: sampleTableId({ name: `t${String(i)}` }) }),
    );
    // The lock only: this replica wins it and may extend it.
    const lock = { set: () => Promise.resolve('OK'), eval: () => Promise.resolve(1) };
    const pass = new ReplanPass({
      planner: {
        replan: async () => {
          await tick();
          return { actions: [{ type: 'merge', action: 'planned' }] };
        },
      },
      states: { page: () => Promise.resolve({ cursor: '0', states }) },
      connection: lock as unknown as Redis,
      logger: createLogger({ service: 'replan-pass-test', level: 'silent' }),
      concurrency: 8,
    });
    expect(await pass.runOnce()).toEqual({ tables: 20, planned: 20, failed: 0 });
  });
});
