// What benchmarks and other packages' tests may use of the planner: its adapters wired by
// hand (no Kafka consumer), table-state fixtures and its process entry. Import
// `@icepack/planner/testing`.
import { resolve } from 'node:path';

/** The planner's `main.ts`, for a test that runs it as its own process. */
export const plannerEntry = resolve(import.meta.dirname, '..', 'main.ts');
export { Planner } from '../adapters/planner.ts';
export { TableStateStore } from '../adapters/state-store.ts';
export { InMemoryTaskEventSink } from '../adapters/task-event-sink.ts';
export { TaskQueue } from '../adapters/task-queue.ts';
export { PLANNER_REDIS_OPTIONS } from '../adapters/redis-options.ts';
export { partitionedTableState, tableState } from '../domain/state-fixtures.ts';
