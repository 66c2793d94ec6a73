import { defineConfig } from 'vitest/config';

// Two projects: `unit` runs without any network; `integration` talks to real Kafka, Redis,
// the Iceberg REST catalog and Spark, which its global setup starts (or reuses).
export default defineConfig({
  test: {
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
          // The machine has two cores and the services under test are heavy (Kafka, Spark):
          // run integration files one at a time so their timings stay meaningful.
          fileParallelism: false,
        },
      },
    ],
  },
});
