// What benchmarks and other packages' tests may use of the dispatcher: the task worker with
// its runner, quota gate and event sink wired by hand. Import `@icepack/dispatcher/testing`.
export { KubeQuota } from '../kube-quota.ts';
export { InMemoryDispatchSink } from '../task-events.ts';
export { TaskWorker } from '../task-worker.ts';
export { LaunchGate } from '../../domain/launch-gate.ts';
export { testBinding } from './test-binding.ts';
export { SparkOperatorRunner } from '../../runners/spark-operator-runner.ts';
export type { RunOutcome, RunRequest } from '../../runners/spark-runner.ts';
export { applicationShapes } from './application-shapes.ts';
