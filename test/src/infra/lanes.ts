/**
 * The integration project's lanes. Integration files run two at a time (two workers), and the
 * setup file (`lane-setup.ts`) keeps the heavy ones apart with two slots (`holdSlots`):
 *
 * - a **shared** file takes no slot: it runs beside anything;
 * - a **paired** file holds one slot for its whole run: two of them run at once;
 * - every other file is **exclusive**: it holds both slots, so it runs alone (beside shared
 *   files only), with its Spark runs and its timings undisturbed by a second heavy file;
 * - the files that use Kubernetes run last, paired or exclusive (`KUBERNETES_FILES`).
 *
 * A shared-lane file starts no Spark (no JVM of any kind), uses no Kubernetes (the control
 * plane starts only for the Kubernetes files, last), never stops or restarts a shared service
 * (Redis, Kafka, the catalogs, S3), and keeps to names of its own (`testNames()`, suffixed
 * topics, catalogs and keys). `lanes.test.ts` checks the first three on each file's text.
 * The lane runs these files (~4 min) beside the first heavy one.
 */
export const SHARED_LANE: readonly string[] = [
  'packages/iceberg/src/catalog/response-limit.int.test.ts',
  'packages/iceberg/src/io/s3-file-io.int.test.ts',
  'packages/runtime/src/kafka/envelope-consumer.int.test.ts',
  'packages/runtime/src/redis/create-redis-connection.int.test.ts',
  'packages/runtime/src/redis/redis-script.int.test.ts',
  'services/dispatcher/src/adapters/batch-claims.int.test.ts',
  'services/dispatcher/src/adapters/figures-catalog-answers.int.test.ts',
  'services/dispatcher/src/adapters/gated-worker.int.test.ts',
  'services/dispatcher/src/adapters/quota-use-publisher.int.test.ts',
  'services/dispatcher/src/adapters/quota.int.test.ts',
  'services/dispatcher/src/adapters/sizing-store.int.test.ts',
  'services/dispatcher/src/main.int.test.ts',
  'services/metadata-scanner/src/adapters/catalog-clients.int.test.ts',
  'services/metadata-scanner/src/adapters/control-plane.int.test.ts',
  'services/metadata-scanner/src/catalog-outage.int.test.ts',
  'services/metadata-scanner/src/discovery.int.test.ts',
  'services/metadata-scanner/src/main.int.test.ts',
  'services/metadata-scanner/src/replicas.int.test.ts',
  'services/metadata-scanner/src/scan.int.test.ts',
  'services/planner/src/api.int.test.ts',
  'services/planner/src/kafka.int.test.ts',
  'services/planner/src/main.int.test.ts',
  'services/planner/src/metrics.int.test.ts',
  'services/planner/src/queue-depth.int.test.ts',
  'services/planner/src/task-queue.int.test.ts',
  'services/provisioner/src/local-mode.int.test.ts',
  'services/provisioner/src/main.int.test.ts',
];

/**
 * The heavy files that may run beside one other heavy file of this list: each never stops,
 * restarts or reconfigures a shared service (nor the Kubernetes control plane), kills no process
 * but its own, keeps to names and namespaces of its own (or only reads what no file writes), and
 * asserts nothing a second Spark run beside it would change (no CPU or wall-time bound, no
 * machine-wide count). About a third of two cores sat idle while these ran one at a time
 * (their Spark runs wait on start-up, idle bounds and polls), which a second one fills.
 * Reviewed file by file (docs/decisions/0055-paired-integration-lane.md). Listed longest first,
 * as a rehearsal measured them (`integration-lanes.tsv`): the order they start in, so that the
 * last ones to run are short and no slot idles while a long file ends alone.
 */
export const PAIRED_LANE: readonly string[] = [
  'services/dispatcher/src/adapters/dispatch-resident.int.test.ts',
  'test/src/e2e/maintenance.int.test.ts',
  'bench/lake-sim/lake-sim.int.test.ts',
  'services/planner/src/convergence.int.test.ts',
  'services/dispatcher/src/adapters/dispatch-unknown-runs.int.test.ts',
  'packages/iceberg/src/health/dangling-deletes.int.test.ts',
  'services/planner/src/partition-rewrite.int.test.ts',
  'services/dispatcher/src/runners/local-runner-s3.int.test.ts',
  'test/src/e2e/orphans-s3.int.test.ts',
  'services/metadata-scanner/src/spark-commit.int.test.ts',
  'test/cross-service/src/e2e/secret-redaction.int.test.ts',
  'test/src/infra/s3-catalog.int.test.ts',
  'services/dispatcher/src/runners/spark-job-cpu.int.test.ts',
  'test/src/e2e/task-figures.int.test.ts',
  'test/src/infra/spark.int.test.ts',
  'services/dispatcher/src/metrics.int.test.ts',
  'services/planner/src/console.int.test.ts',
  'services/metadata-scanner/src/table-state-version.int.test.ts',
  'test/src/e2e/dev-down.int.test.ts',
  'test/src/e2e/kafka-acls.int.test.ts',
  'packages/iceberg/src/catalog/oauth2-catalog.int.test.ts',
  'test/src/e2e/job-span.int.test.ts',
  'test/src/infra/infra.int.test.ts',
  'services/provisioner/src/catalog-secrets.int.test.ts',
  'services/provisioner/src/api-bounds.int.test.ts',
  'services/planner/src/adapters/ledger-store.int.test.ts',
  // Files that use Kubernetes (KUBERNETES_FILES) run last all the same, these first.
  'services/dispatcher/src/adapters/dispatch-outcomes.int.test.ts',
  'services/dispatcher/src/adapters/dispatch-crash.int.test.ts',
  'services/dispatcher/src/runners/operator-real.int.test.ts',
  'test/src/e2e/maintenance-k8s.int.test.ts',
  'services/provisioner/src/reconcile.int.test.ts',
  'services/provisioner/src/lifecycle.int.test.ts',
  'services/provisioner/src/namespace-security.int.test.ts',
  'test/src/k8s-real/control-plane.int.test.ts',
  'services/provisioner/src/crash.int.test.ts',
  'services/dispatcher/src/adapters/dispatcher-rights.int.test.ts',
];

/**
 * The integration files that use the Kubernetes control plane (`inject('infra').kube`). The
 * global setup does not start it: each of these starts it (`k8s.sh up`, which leaves a healthy
 * one as it is) once it holds its slots, and they run last — those listed in `PAIRED_LANE` two
 * at a time (each in namespaces of its own; the provisioner deletes only the namespaces of its
 * own installation), `kube-quota.int.test.ts` alone (it starts a second API server on the
 * cluster's etcd). On a fresh machine the control plane's Go build (~30 min on two cores),
 * which `./dev test` starts first of all, goes on while every other file runs.
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

/** When an integration file starts: `kubernetes` files (paired or exclusive) run last. */
export type Lane = 'shared' | 'paired' | 'exclusive' | 'kubernetes';

const shared = new Set(SHARED_LANE);
const paired = new Set(PAIRED_LANE);
const kubernetes = new Set(KUBERNETES_FILES);
const pairedRank = new Map(PAIRED_LANE.map((file, at) => [file, at]));

/** A path from the repository root with either separator, as the lists spell it. */
const listed = (relativePath: string): string => relativePath.replaceAll('\\', '/');

/**
 * The lane of the file at `relativePath` (from the repository root, either separator), which
 * says when it starts: a file that uses Kubernetes is in the `kubernetes` lane, paired or not.
 */
export function laneOf(relativePath: string): Lane {
  const path = listed(relativePath);
  if (shared.has(path)) return 'shared';
  if (kubernetes.has(path)) return 'kubernetes';
  return paired.has(path) ? 'paired' : 'exclusive';
}

/** What the file holds of the two heavy slots (`holdSlots`): none, one, or both. */
export function slotsOf(relativePath: string): 'none' | 'paired' | 'exclusive' {
  const path = listed(relativePath);
  if (shared.has(path)) return 'none';
  return paired.has(path) ? 'paired' : 'exclusive';
}

/** Where a file starts among its lane's: a paired file by its place in `PAIRED_LANE`. */
export function laneRank(relativePath: string): number {
  return pairedRank.get(listed(relativePath)) ?? Number.POSITIVE_INFINITY;
}

/**
 * The order the integration files start in, two workers taking the next as one frees: the
 * first paired file, then every shared-lane file (run by the other worker meanwhile), then the
 * other paired files (two at a time), the exclusive files, and the Kubernetes ones last; within
 * a lane by `rank` (the paired files: their place in `PAIRED_LANE`), else in the order given
 * (Vitest's: longest first by the last run's timings, else largest first). Started later, the
 * shared files would only queue behind the heavy ones; a paired file between two exclusive ones
 * would run alone; started earlier, a Kubernetes file could wait for the build. With no paired
 * file, the first exclusive one (else the first Kubernetes one) starts first.
 */
export function laneOrder<T>(
  files: readonly T[],
  lane: (file: T) => Lane,
  rank: (file: T) => number = () => 0,
): T[] {
  const of = (l: Lane): T[] =>
    files.filter((f) => lane(f) === l).sort((a, b) => Math.sign(rank(a) - rank(b)) || 0);
  const [first, ...heavy] = [...of('paired'), ...of('exclusive'), ...of('kubernetes')];
  return first === undefined ? of('shared') : [first, ...of('shared'), ...heavy];
}
