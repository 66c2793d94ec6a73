import { describe, expect, it } from 'vitest';
import { runLakeSim } from './lake-sim.ts';
import { DEFAULTS } from './domain/options.ts';
import { invariants } from './domain/result.ts';

// The lake simulator for three minutes with Icepack at its defaults (docs/lake-sim.md):
// private Redis, Kafka and REST catalog, 24 tables written by one Spark session, the four
// services bound to the simulator's catalog. Only the invariants are asserted — never a
// timing, a file count or a compute figure, which depend on the machine's load.
const MINUTE = 60_000;

describe('lake simulator, 3 minutes, policy icepack', () => {
  it(
    'wastes no task, runs no Spark job twice, and every row written reads back exactly once',
    async () => {
      const log: string[] = [];
      const result = await runLakeSim(
        { ...DEFAULTS, minutes: 3, policies: ['icepack'], outDir: '' },
        'icepack',
        (line) => log.push(line),
      );
      const found = invariants(result);
      const context = [
        ...log,
        `tasks: ${JSON.stringify(result.tasks, null, 1)}`,
        `verify: ${JSON.stringify(result.verify)}`,
      ].join('\n');
      // The writers really wrote, and the data was read back.
      expect(result.writes.commits, context).toBeGreaterThan(result.tables.length);
      expect(found.verified, context).toBe(true);
      expect(found.data, context).toEqual([]);
      expect(found.wasted, context).toEqual([]);
      expect(found.duplicates, context).toEqual([]);
    },
    40 * MINUTE,
  );
});
