// What benchmarks and other packages' tests may use of the dispatcher: the task worker with
// its runner, quota gate and event sink wired by hand, the SparkApplication it makes of a task
// and its process entry. Import `@icepack/dispatcher/testing`.
import { resolve } from 'node:path';

/** The dispatcher's `main.ts`, for a test that runs it as its own process. */
export const dispatcherEntry = resolve(import.meta.dirname, '..', '..', 'main.ts');
export { KubeQuota } from '../kube-quota.ts';
export { InMemoryDispatchSink } from '../task-events.ts';
export { TaskWorker } from '../task-worker.ts';
export { LaunchGate } from '../../domain/launch-gate.ts';
export { testBinding } from './test-binding.ts';
export { SparkOperatorRunner } from '../../runners/spark-operator-runner.ts';
export { sparkApplication } from '../../runners/spark-application.ts';
export type { RunOutcome, RunRequest } from '../../runners/spark-runner.ts';
export { applicationShapes } from './application-shapes.ts';
