import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, inject, it } from 'vitest';

// The job's `cpuSeconds` on a cluster (docs/spark-job.md): the driver's processes plus what
// the executors spent, read from Spark's monitoring API. Spark's `local-cluster` master runs
// the executor in its own JVM, as on Kubernetes, so the executors' CPU is not in the driver's
// process figures; the job must add it (before, a cluster run reported no CPU at all).

const run = promisify(execFile);
const infra = inject('infra');
const jobsDir = resolve(import.meta.dirname, '..', '..', '..', '..', 'jobs', 'spark');
const dirs: string[] = [];

afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

const PROBE = `
import argparse, json, os, sys, time
sys.path.insert(0, ${JSON.stringify(jobsDir)})
import icepack_job as job

# The job's own session, without a catalog.
spark = job.build_session(argparse.Namespace(catalog_name="probe", catalog_uri=None, warehouse=None), "probe")
spark.range(0, 20_000_000, numPartitions=2).selectExpr("sum(id * id % 7)").collect()
# Tasks that outlast two of the executor's 1 s metric polls (EXECUTOR_METRICS_POLLING): a task
# that ends between two polls carries no heap peak, and the sum's tasks can be that short.
spark.sparkContext.parallelize(range(2), 2).map(lambda x: time.sleep(2.5) or x).collect()
driver = job.process_cpu_seconds([os.getppid(), os.getpid()])
total = job.run_cpu_seconds(spark)
context = spark.sparkContext
executors = job.executor_cpu_seconds(job.stages_of(context.uiWebUrl, context.applicationId))
memory = job.run_memory(spark)
print("PROBE " + json.dumps({"master": context.master, "driver": driver, "total": total, "executors": executors, "memory": memory}))
spark.stop()
`;

describe('the job’s CPU and memory figures on a cluster', () => {
  it('adds the executors’ CPU from the monitoring API to the driver’s, and reads their heap peak', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'icepack-cpu-probe-'));
    dirs.push(dir);
    const script = join(dir, 'probe.py');
    await writeFile(script, PROBE);
    const { stdout } = await run(
      join(dirname(infra.python), 'spark-submit'),
      [
        ...['--master', 'local-cluster[1,1,1024]'],
        ...['--conf', 'spark.ui.port=0', '--conf', 'spark.driver.host=127.0.0.1'],
        // No executor heartbeat during the probe (the first would come 100–200 s after the
        // executor started): the heap peak must come with the task ends. Before, it came only
        // from heartbeats, and a run shorter than 10–20 s reported none.
        ...[
          '--conf',
          'spark.executor.heartbeatInterval=100s',
          '--conf',
          'spark.network.timeout=600s',
        ],
        script,
      ],
      {
        env: { ...process.env, SPARK_LOCAL_IP: '127.0.0.1', PYSPARK_PYTHON: infra.python },
        maxBuffer: 64 * 2 ** 20,
        timeout: 600_000,
      },
    );
    const line = stdout.split('\n').find((l) => l.startsWith('PROBE '));
    expect(line, stdout.slice(-2000)).toBeDefined();
    const probe = JSON.parse(line!.slice('PROBE '.length)) as {
      master: string;
      driver: number;
      total: number | null;
      executors: number;
      memory: { peakHeapBytes: number; heapBytes?: number; cores: number } | null;
    };
    expect(probe.master).toBe('local-cluster[1,1,1024]');
    // The executor JVM did the summing: its CPU is counted, on top of the driver's.
    expect(probe.executors).toBeGreaterThan(0);
    expect(probe.total).not.toBeNull();
    expect(probe.total!).toBeGreaterThanOrEqual(probe.driver + probe.executors);
    // The executor JVM's heap peak (issue 18, memory per file group): its own, not the
    // driver's, within the 1 GiB heap `local-cluster[1,1,1024]` gives it, over its one core.
    expect(probe.memory).not.toBeNull();
    expect(probe.memory!.peakHeapBytes).toBeGreaterThan(0);
    expect(probe.memory!.heapBytes).toBe(1024 * 2 ** 20);
    expect(probe.memory!.peakHeapBytes).toBeLessThanOrEqual(probe.memory!.heapBytes!);
    expect(probe.memory!.cores).toBe(1);
  }, 660_000);
});
