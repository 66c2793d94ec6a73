"""Where an Icepack task's CPU and wall time go inside a warm Spark session
(bench/results/task-cost-warm-2026-12-04.md).

    python phases.py --job-dir DIR --catalog-uri URI [--tables N] [--warmup W] [--out FILE]

One local Spark session (the local runner's settings: local[2], UI off) runs, on fresh tables:
W warm-up tasks, then a merge and a cleanup task on each of N tables of each kind, through
`run_in_session` of the icepack_job.py in DIR (an old or a new worktree's), with each phase
of the task timed (wall and the CPU of the driver JVM and this Python, from /proc); then, in
the same session on N more tables of each kind, the bare procedures the lake simulator's cron
calls (`rewrite_data_files`, `expire_snapshots`). Kinds: `append` (format 2, appends only) and
`mor` (format 2, merge-on-read, with position deletes). One JSON line per task and a summary
line on stdout.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "test", "fixtures"))

from session import find_iceberg_jar  # noqa: E402

KINDS = ("append", "mor")
# Py4J's memory command, delete subcommand: Python no longer holds a proxy of a Java object.
RELEASE_COMMAND = "m\nd\n"
COMMITS = 6
ROWS_PER_COMMIT = 200


def load_job(job_dir: str):
    spec = importlib.util.spec_from_file_location("icepack_job", os.path.join(job_dir, "icepack_job.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Clock:
    """Wall and CPU (driver JVM + this Python) by phase, for the task being run."""

    def __init__(self, job, pids: list[int]) -> None:
        self.job = job
        self.pids = pids
        self.phases: dict[str, list[float]] = {}
        self.stack: list[str] = []
        # Py4J round trips (commands sent to the JVM) by phase, nested phases apart as above.
        # The messages releasing Python's proxies of Java objects are counted apart (`releases`):
        # they come when Python's collector runs, in whichever phase that is.
        self.calls = 0
        self.releases = 0
        self.phase_calls: dict[str, int] = {}

    def count_calls(self, gateway_client) -> None:
        """Counts every command this Python sends the JVM (each a round trip)."""
        send = gateway_client.send_command

        def counted(command, *args, **kwargs):
            if isinstance(command, str) and command.startswith(RELEASE_COMMAND):
                self.releases += 1
            else:
                self.calls += 1
            return send(command, *args, **kwargs)

        gateway_client.send_command = counted

    def cpu(self) -> float:
        # The job's own /proc reading (utime + stime), the figure its result reports.
        seconds = self.job.process_cpu_seconds(self.pids)
        if seconds is None:
            raise RuntimeError(f"/proc cannot tell the CPU of {self.pids}")
        return seconds

    def wrap(self, module, name: str, phase) -> None:
        original = getattr(module, name)

        def timed(*args, **kwargs):
            label = phase() if callable(phase) else phase
            # Nested phases count in their own line only (the outer one is charged the rest).
            wall0, cpu0, calls0 = time.monotonic(), self.cpu(), self.calls
            self.stack.append(label)
            try:
                return original(*args, **kwargs)
            finally:
                self.stack.pop()
                wall, cpu = time.monotonic() - wall0, self.cpu() - cpu0
                calls = self.calls - calls0
                self.phase_calls[label] = self.phase_calls.get(label, 0) + calls
                if self.stack:
                    self.phase_calls[self.stack[-1]] = self.phase_calls.get(self.stack[-1], 0) - calls
                entry = self.phases.setdefault(label, [0.0, 0.0])
                entry[0] += wall
                entry[1] += cpu
                if self.stack:
                    outer = self.phases.setdefault(self.stack[-1], [0.0, 0.0])
                    outer[0] -= wall
                    outer[1] -= cpu

        setattr(module, name, timed)


def instrument(job, clock: Clock) -> None:
    figures_calls = [0]

    def figures_phase() -> str:
        figures_calls[0] += 1
        return "before-figures" if figures_calls[0] % 2 == 1 else "after-figures"

    clock.wrap(job, "load_table", "load-table")
    clock.wrap(job, "guard_table", "guard")
    clock.wrap(job, "table_figures", figures_phase)
    clock.wrap(job, "run_expire", "expire")
    clock.wrap(job, "run_rewrite_action", "rewrite")
    clock.wrap(job, "remove_dangling_deletes", "dangling")
    clock.wrap(job, "dangling_position_delete_files", "dangling-scan")
    if hasattr(job, "dangling_in_driver"):  # decision 0054's driver path; an older job has none
        clock.wrap(job, "dangling_in_driver", "dangling-driver")
    clock.wrap(job, "commits_since", "commit-totals")
    clock.wrap(job, "commit_totals", "commit-totals")
    clock.wrap(job, "run_cpu_seconds", "probes")
    clock.wrap(job, "run_memory", "probes")


def session(catalog: str, uri: str):
    from pyspark.sql import SparkSession

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    prefix = f"spark.sql.catalog.{catalog}"
    spark = (
        SparkSession.builder.appName("icepack-task-cost")
        .master("local[2]")
        .config("spark.jars", find_iceberg_jar())
        .config("spark.driver.memory", "1536m")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
        .config("spark.executor.metrics.pollingInterval", "1s")
        .config(prefix, "org.apache.iceberg.spark.SparkCatalog")
        .config(f"{prefix}.type", "rest")
        .config(f"{prefix}.uri", uri)
        .config(f"{prefix}.cache-enabled", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def create_table(spark, catalog: str, ns: str, name: str, kind: str) -> None:
    sql = f"`{catalog}`.`{ns}`.`{name}`"
    props = {"format-version": "2", "write.distribution-mode": "none", "history.expire.max-snapshot-age-ms": "1"}
    if kind == "mor":
        props.update({"write.delete.mode": "merge-on-read", "write.update.mode": "merge-on-read"})
    tbl = ", ".join(f"'{k}'='{v}'" for k, v in props.items())
    spark.sql(f"CREATE TABLE {sql} (id BIGINT, value STRING) USING iceberg TBLPROPERTIES ({tbl})")
    for c in range(COMMITS):
        lo = c * ROWS_PER_COMMIT
        spark.range(lo, lo + ROWS_PER_COMMIT, numPartitions=2).selectExpr("id", "sha2(cast(id AS STRING), 256) AS value").writeTo(sql).append()
    if kind == "mor":
        # Position deletes: three commits of deletes over the data files.
        for d in range(3):
            spark.sql(f"DELETE FROM {sql} WHERE id % 17 = {d}")


def tasks_for(catalog: str, ns: str, name: str, table_uuid: str) -> list[dict]:
    table = {"catalog": catalog, "namespace": [ns], "name": name}
    state = {"tableUuid": table_uuid}
    merge = {
        "id": f"merge/{ns}/{name}",
        "type": "merge",
        "table": table,
        "state": state,
        "parameters": {
            "targetFileSizeBytes": 128 * 2**20,
            "minFileSizeBytes": 96 * 2**20,
            "maxFileSizeBytes": 192 * 2**20,
            "minInputFiles": 2,
            "deleteFileThreshold": 1,
            "rewritePositionDeletes": False,
        },
    }
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 5))
    cleanup = {
        "id": f"cleanup/{ns}/{name}",
        "type": "cleanup",
        "table": table,
        "state": state,
        "parameters": {"olderThan": now, "retainLast": 1},
    }
    return [merge, cleanup]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--job-dir", required=True)
    parser.add_argument("--catalog-uri", required=True)
    parser.add_argument("--catalog", default="bench")
    parser.add_argument("--tables", type=int, default=5, help="tables of each kind measured (and as many for the procedures)")
    parser.add_argument("--warmup", type=int, default=2, help="tables of each kind run first, not measured")
    parser.add_argument("--no-procedures", action="store_true")
    parser.add_argument("--idle-seconds", type=float, default=30.0)
    args = parser.parse_args()

    job = load_job(args.job_dir)
    spark = session(args.catalog, args.catalog_uri)
    jvm_pid = int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())
    clock = Clock(job, [jvm_pid, os.getpid()])
    clock.count_calls(spark.sparkContext._gateway._gateway_client)
    instrument(job, clock)
    ns = "tc" + uuid.uuid4().hex[:8]
    spark.sql(f"CREATE NAMESPACE `{args.catalog}`.`{ns}`")
    jargs = argparse.Namespace(catalog_name=args.catalog, max_concurrent_file_group_rewrites=None)

    def make(prefix: str, count: int) -> list[tuple[str, str]]:
        made = []
        for kind in KINDS:
            for i in range(count):
                name = f"{prefix}_{kind}_{i}"
                create_table(spark, args.catalog, ns, name, kind)
                made.append((name, kind))
        return made

    warm = make("warm", args.warmup)
    measured = make("job", args.tables)
    procs = [] if args.no_procedures else make("proc", args.tables)
    cores = [] if args.no_procedures else make("core", max(1, args.tables // 2))
    time.sleep(1.5)  # the cleanup cutoff (now + 5 s at task build) is past every snapshot

    def run_tasks(tables: list[tuple[str, str]], report: bool) -> None:
        for name, kind in tables:
            table_uuid = str(job.load_table(spark, args.catalog, {"namespace": [ns], "name": name}).uuid())
            for task in tasks_for(args.catalog, ns, name, table_uuid):
                clock.phases, clock.phase_calls = {}, {}
                wall0, cpu0, calls0, releases0 = time.monotonic(), clock.cpu(), clock.calls, clock.releases
                payload = job.run_in_session(spark, jargs, task, time.monotonic(), 0.0)
                wall, cpu = time.monotonic() - wall0, clock.cpu() - cpu0
                calls, releases = clock.calls - calls0, clock.releases - releases0
                if report:
                    line = {
                        "kind": "task",
                        "table": kind,
                        "type": task["type"],
                        "wall": round(wall, 3),
                        "cpu": round(cpu, 3),
                        "phases": {k: [round(v[0], 3), round(v[1], 3)] for k, v in clock.phases.items()},
                        # Py4J round trips: the task's (the /proc CPU reads are Python only) and by
                        # phase, without the proxy releases (the task's apart).
                        "py4jCalls": calls,
                        "py4jReleases": releases,
                        "phaseCalls": clock.phase_calls,
                        "before": payload["before"],
                        "after": payload["after"],
                        "outcome": {k: v for k, v in payload.items() if k in ("rewriteDataFiles", "removeDanglingDeleteFiles", "rewritePositionDeleteFiles", "expireSnapshots")},
                    }
                    print(json.dumps(line), flush=True)

    # The warm-up tables are loaded through the wrapped load_table too: reset after.
    run_tasks(warm, report=False)
    run_tasks(measured, report=True)

    for name, kind in procs:
        ident = f"{ns}.{name}"
        for what, sql in (
            ("rewrite_data_files", f"CALL `{args.catalog}`.system.rewrite_data_files(table => '{ident}')"),
            ("expire_snapshots", f"CALL `{args.catalog}`.system.expire_snapshots(table => '{ident}')"),
        ):
            wall0, cpu0 = time.monotonic(), clock.cpu()
            rows = spark.sql(sql).collect()
            wall, cpu = time.monotonic() - wall0, clock.cpu() - cpu0
            print(json.dumps({"kind": "procedure", "table": kind, "type": what, "wall": round(wall, 3), "cpu": round(cpu, 3), "result": [r.asDict() for r in rows]}, default=str), flush=True)
    # A driver-only expiry for reference: Iceberg core's ExpireSnapshots (no Spark job; the
    # job does not use it: its result has no per-kind counts).
    for name, kind in cores:
        table = job.load_table(spark, args.catalog, {"namespace": [ns], "name": name})
        wall0, cpu0 = time.monotonic(), clock.cpu()
        table.expireSnapshots().expireOlderThan(int(time.time() * 1000)).retainLast(1).commit()
        wall, cpu = time.monotonic() - wall0, clock.cpu() - cpu0
        print(json.dumps({"kind": "core-expire", "table": kind, "wall": round(wall, 3), "cpu": round(cpu, 3)}), flush=True)
    # What the warm session costs doing nothing (a resident session waits between tasks).
    cpu0 = clock.cpu()
    time.sleep(args.idle_seconds)
    print(json.dumps({"kind": "idle", "seconds": args.idle_seconds, "cpu": round(clock.cpu() - cpu0, 3)}), flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
