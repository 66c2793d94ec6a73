import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { runLakeSim } from './lake-sim.ts';
import { DEFAULTS } from './domain/options.ts';
import { invariants } from './domain/result.ts';

// The lake simulator for three minutes with Icepack at its defaults (docs/lake-sim.md):
// private Redis, Kafka and REST catalog, two tables of each writer kind (stream, CDC, batch,
// evolving, tagged) written by one Spark session, the four services bound to the simulator's
// catalog. Two per kind rather than the lake's 24 tables: every writer kind and every task
// type still runs, at less than half the suite time. Only the invariants are asserted — never a
// timing, a file count or a compute figure, which depend on the machine's load.
const MINUTE = 60_000;
// The run's progress lines, with seconds since the start, go to
// $ICEPACK_RUN/artefacts/lake-sim-smoke.log (where its time goes: setup, writing, settling).
const artefacts = join(inject('infra').runDir, 'artefacts');

describe('lake simulator, 3 minutes, policy icepack', () => {
  it(
    'wastes no task, runs no Spark job twice, and every row written reads back exactly once',
    async () => {
      const log: string[] = [];
      const start = Date.now();
      const result = await runLakeSim(
        { ...DEFAULTS, minutes: 3, maxPerKind: 2, policies: ['icepack'], outDir: '' },
        'icepack',
        (line) => log.push(`+${String(Math.round((Date.now() - start) / 1000))} s ${line}`),
      );
      await mkdir(artefacts, { recursive: true });
      await writeFile(join(artefacts, 'lake-sim-smoke.log'), `${log.join('\n')}\n`);
      const found = invariants(result);
      const context = [
        ...log,
        `tasks: ${JSON.stringify(result.tasks, null, 1)}`,
        `verify: ${JSON.stringify(result.verify)}`,
      ].join('\n');
      // The writers really wrote, and the data was read back.
      expect(result.writes.commits, context).toBeGreaterThan(result.tables.length);
      // Icepack really maintained the lake: without a succeeded task the invariants below
      // would hold vacuously.
      expect(
        result.tasks.filter((t) => t.outcome === 'succeeded').map((t) => t.type),
        context,
      ).toContain('merge');
      expect(found.verified, context).toBe(true);
      expect(found.data, context).toEqual([]);
      expect(found.wasted, context).toEqual([]);
      expect(found.duplicates, context).toEqual([]);
      // Its work in cron's terms was read from the run directories: every succeeded task's
      // own time is there (a failed one may have written none).
      const succeeded = result.tasks.filter((t) => t.outcome === 'succeeded').length;
      expect(result.taskTime?.tasks, context).toBeGreaterThanOrEqual(succeeded);
      expect(result.taskTime?.coreSeconds, context).toBeGreaterThan(0);
    },
    40 * MINUTE,
  );
});
