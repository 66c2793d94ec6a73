// A dispatcher worker as its own process, for the crash tests (SIGKILL mid-job, restart).
// Configured by the JSON in ICEPACK_TEST_WORKER; prints "ready" once it takes tasks.
import { KubeConfig } from '@kubernetes/client-node';
import { RestCatalog } from '@icepack/iceberg';
import { kubeConfigWithToken } from '@icepack/test';
import { createLogger, EnvelopeProducer, KafkaClient } from '@icepack/runtime';
import { Redis } from 'ioredis';
import { LaunchGate } from '../../domain/launch-gate.ts';
import { LocalRunner } from '../../runners/local-runner.ts';
import { SparkOperatorRunner } from '../../runners/spark-operator-runner.ts';
import type { BatchRunKey, BatchTask, SparkRunner } from '../../runners/spark-runner.ts';
import { LocalBudgetQuota } from '../quota.ts';
import { CatalogTableHealth } from '../table-health.ts';
import { KafkaDispatchSink, type DispatchSink } from '../task-events.ts';
import { TaskWorker } from '../task-worker.ts';
import { testBinding } from './test-binding.ts';

interface WorkerProcessConfig {
  readonly catalogName: string;
  readonly catalogUri: string;
  readonly redisUrl: string;
  readonly brokers: string[];
  readonly stateDir: string;
  readonly runner: 'local' | 'spark-operator';
  /** The cluster (server, CA) of the spark-operator runner: a kubeconfig file. */
  readonly kubeconfig?: string;
  /** The token the runner authenticates with (a ServiceAccount's, bound to the chart's role). */
  readonly kubeToken?: string;
  readonly lockMs: number;
  /** SparkApplication `timeToLiveSeconds`. Default the runner's. */
  readonly ttlSeconds?: number;
  /**
   * Die (SIGKILL itself) right after publishing a task's outcome event: the crash point
   * between reporting a run's end and BullMQ completing the job.
   */
  readonly crashAfterOutcome?: boolean;
  /**
   * Die (SIGKILL itself) right after publishing a resident session's idle tail: the crash
   * point between reporting the tail at the application's exit and BullMQ completing the job.
   */
  readonly crashAfterTail?: boolean;
  /** Batched runs (ADR 0027) with the default bounds; and one slot, so one task leads. */
  readonly batch?: boolean;
  /** A resident session (ADR 0045); needs `batch`. */
  readonly resident?: { readonly idleSeconds: number; readonly maxTasks: number };
  /**
   * Die (SIGKILL itself) at the first append to a resident session: after the tasks' batch
   * is recorded and before the rename into the inbox, or right after the rename.
   */
  readonly crashAtAppend?: 'before-rename' | 'after-rename';
}

const config = JSON.parse(process.env.ICEPACK_TEST_WORKER ?? '{}') as WorkerProcessConfig;
const logger = createLogger({ service: 'dispatcher-test-worker', level: 'info' });
const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: null });
const kafka = new KafkaClient({ brokers: config.brokers, clientId: 'dispatch-crash', logger });
const producer = new EnvelopeProducer(kafka);
await producer.connect();
const catalog = new RestCatalog({ name: config.catalogName, uri: config.catalogUri });
let runner: SparkRunner;
/** The local runner, dying at the append if told to (`crashAtAppend`). */
class CrashingLocalRunner extends LocalRunner {
  override async appendToBatch(key: BatchRunKey, tasks: readonly BatchTask[]): Promise<boolean> {
    if (config.crashAtAppend === 'before-rename') process.kill(process.pid, 'SIGKILL');
    const accepted = await super.appendToBatch(key, tasks);
    if (config.crashAtAppend === 'after-rename') process.kill(process.pid, 'SIGKILL');
    return accepted;
  }
}
if (config.runner === 'local') {
  runner = new CrashingLocalRunner({ stateDir: config.stateDir, pollMs: 500 });
} else {
  const cluster = new KubeConfig();
  cluster.loadFromFile(config.kubeconfig ?? '');
  runner = new SparkOperatorRunner({
    kubeConfig: kubeConfigWithToken(cluster, config.kubeToken ?? ''),
    pollMs: 500,
    ...(config.ttlSeconds === undefined ? {} : { timeToLiveSeconds: config.ttlSeconds }),
  });
}
const kafkaSink = new KafkaDispatchSink(producer);
const sink: DispatchSink = {
  taskEvent: async (event) => {
    await kafkaSink.taskEvent(event);
    if (
      config.crashAfterOutcome === true &&
      (event.status === 'succeeded' || event.status === 'failed')
    )
      process.kill(process.pid, 'SIGKILL');
  },
  sessionTail: async (tail) => {
    await kafkaSink.sessionTail(tail);
    if (config.crashAfterTail === true) process.kill(process.pid, 'SIGKILL');
  },
  requestScan: (table, taskId) => kafkaSink.requestScan(table, taskId),
};
const worker = new TaskWorker({
  binding: testBinding(config.catalogName, {
    runner: config.runner,
    namespace: `icepack-${config.catalogName}`,
    ...(config.batch === true ? { slots: 1, smallSlots: 0 } : {}),
  }),
  connection: redis,
  runner,
  quota: new LocalBudgetQuota({ redis, prefix: `crash-${config.catalogName}` }),
  sink,
  health: new CatalogTableHealth(() => catalog),
  catalog: { name: config.catalogName, uri: config.catalogUri },
  logger,
  lockDurationMs: config.lockMs,
  timeoutMs: 20 * 60_000,
  ...(config.batch === true ? { batch: {} } : {}),
  ...(config.resident === undefined ? {} : { resident: config.resident }),
  // As main.ts builds it: crashes and restarts are tested through the gated worker (ADR 0040).
  launchGate: new LaunchGate(8),
});
await worker.start();
process.stdout.write('ready\n');
