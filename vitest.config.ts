import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { LaneSequencer } from '@icepack/test/vitest';

// Two projects: `unit` runs without any network; `integration` talks to real Kafka, Redis,
// the Iceberg REST catalog and Spark, which its global setup starts (or reuses).
export default defineConfig({
  test: {
    // At least two workers, also on a two-core machine (Vitest's default there is one).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    sequence: { sequencer: LaneSequencer },
    projects: [
      {
        test: {
          name: 'unit',
          include: ['{packages,services,test,bench}/**/*.test.ts'],
          exclude: ['**/node_modules/**', '**/*.int.test.ts'],
        },
      },
      {
        test: {
          name: 'integration',
          include: ['{packages,services,test,bench}/**/*.int.test.ts'],
          exclude: ['**/node_modules/**'],
          globalSetup: ['./test/src/infra/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 300_000,
          // Lanes (test/src/infra/lanes.ts): the services under test are heavy (Kafka,
          // Spark) and the machine may have two cores, so the files that run Spark, use
          // Kubernetes or stop a service run alone — or, those of the paired lane, two at a
          // time; light files listed in the shared lane run beside them.
          maxWorkers: 2,
          setupFiles: ['./test/src/infra/lane-setup.ts'],
        },
      },
    ],
  },
});
