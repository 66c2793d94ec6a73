// What benchmarks and other packages' tests may use of the planner: its adapters wired by
// hand (no Kafka consumer) and table-state fixtures. Import `@icepack/planner/testing`.
export { Planner } from '../adapters/planner.ts';
export { TableStateStore } from '../adapters/state-store.ts';
export { InMemoryTaskEventSink } from '../adapters/task-event-sink.ts';
export { TaskQueue } from '../adapters/task-queue.ts';
export { PLANNER_REDIS_OPTIONS } from '../adapters/redis-options.ts';
export { partitionedTableState, tableState } from '../domain/state-fixtures.ts';
