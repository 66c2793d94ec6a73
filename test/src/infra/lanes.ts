/**
 * The integration project's two lanes. Integration files run two at a time, but a file runs
 * beside another only if it is in the shared lane; every other file holds the exclusive lane
 * (a lock, `exclusive-lane.ts`) for its whole run, so at most one of them runs at a time,
 * as before, with its Spark runs and its timings undisturbed by a second heavy file.
 *
 * A shared-lane file starts no Spark (no JVM of any kind), uses no Kubernetes (the
 * provisioner's reconcile owns cluster-wide objects), never stops or restarts a shared service
 * (Redis, Kafka, the catalogs, S3), and keeps to names of its own (`testNames()`, suffixed
 * topics, catalogs and keys). `lanes.test.ts` checks the first three on each file's text.
 * The lane saves the time of these files (~3 min of ~55) beside the long exclusive ones.
 */
export const SHARED_LANE: readonly string[] = [
  'packages/iceberg/src/catalog/response-limit.int.test.ts',
  'packages/iceberg/src/io/s3-file-io.int.test.ts',
  'packages/runtime/src/kafka/envelope-consumer.int.test.ts',
  'packages/runtime/src/redis/create-redis-connection.int.test.ts',
  'packages/runtime/src/redis/redis-script.int.test.ts',
  'services/dispatcher/src/adapters/batch-claims.int.test.ts',
  'services/dispatcher/src/adapters/gated-worker.int.test.ts',
  'services/dispatcher/src/adapters/quota-use-publisher.int.test.ts',
  'services/dispatcher/src/adapters/quota.int.test.ts',
  'services/dispatcher/src/adapters/sizing-store.int.test.ts',
  'services/dispatcher/src/main.int.test.ts',
  'services/metadata-scanner/src/adapters/control-plane.int.test.ts',
  'services/metadata-scanner/src/catalog-outage.int.test.ts',
  'services/metadata-scanner/src/discovery.int.test.ts',
  'services/metadata-scanner/src/main.int.test.ts',
  'services/metadata-scanner/src/replicas.int.test.ts',
  'services/metadata-scanner/src/scan.int.test.ts',
  'services/planner/src/api.int.test.ts',
  'services/planner/src/convergence.int.test.ts',
  'services/planner/src/kafka.int.test.ts',
  'services/planner/src/main.int.test.ts',
  'services/planner/src/metrics.int.test.ts',
  'services/planner/src/queue-depth.int.test.ts',
  'services/planner/src/task-queue.int.test.ts',
  'services/provisioner/src/local-mode.int.test.ts',
  'services/provisioner/src/main.int.test.ts',
];

/**
 * The integration files that use the Kubernetes control plane (`inject('infra').kube`). The
 * global setup does not start it: each of these starts it (`k8s.sh up`) once it holds the
 * exclusive lane, and they run last. On a fresh machine the control plane's Go build (~30 min
 * on two cores), which `./dev test` starts first of all, goes on while every other file runs.
 * `lanes.test.ts` checks that this is exactly the files whose text uses Kubernetes.
 */
export const KUBERNETES_FILES: readonly string[] = [
  'services/dispatcher/src/adapters/dispatch-crash.int.test.ts',
  'services/dispatcher/src/adapters/dispatch-outcomes.int.test.ts',
  'services/dispatcher/src/adapters/dispatcher-rights.int.test.ts',
  'services/dispatcher/src/adapters/kube-quota.int.test.ts',
  'services/dispatcher/src/runners/operator-real.int.test.ts',
  'services/provisioner/src/crash.int.test.ts',
  'services/provisioner/src/lifecycle.int.test.ts',
  'services/provisioner/src/namespace-security.int.test.ts',
  'services/provisioner/src/reconcile.int.test.ts',
  'test/src/e2e/maintenance-k8s.int.test.ts',
  'test/src/k8s-real/control-plane.int.test.ts',
];

/** The lane of an integration file: `kubernetes` files are exclusive ones that run last. */
export type Lane = 'shared' | 'exclusive' | 'kubernetes';

const shared = new Set(SHARED_LANE);
const kubernetes = new Set(KUBERNETES_FILES);

/** The lane of the file at `relativePath` (from the repository root, either separator). */
export function laneOf(relativePath: string): Lane {
  const path = relativePath.replaceAll('\\', '/');
  if (shared.has(path)) return 'shared';
  return kubernetes.has(path) ? 'kubernetes' : 'exclusive';
}

/**
 * The order the integration files start in, two workers taking the next as one frees: the
 * first exclusive file, then every shared-lane file (run by the other worker meanwhile), then
 * the other exclusive files, then the Kubernetes ones, each in the order given (longest
 * first, as the sequencer ranks them). Started later, the shared files would only queue
 * behind the exclusive lock; started earlier, a Kubernetes file could wait for the build.
 */
export function laneOrder<T>(files: readonly T[], lane: (file: T) => Lane): T[] {
  const of = (l: Lane): T[] => files.filter((f) => lane(f) === l);
  const [first, ...rest] = [...of('exclusive'), ...of('kubernetes')];
  return first === undefined ? of('shared') : [first, ...of('shared'), ...rest];
}
