"""Where a small table's driver path stops being cheaper than Spark's (decisions 0051, 0054;
bench/results/driver-bound-2026-12-05.md).

    python driver_bound.py --job-dir DIR --catalog-uri URI [--catalog-property K=V ...]
        [--files 1000,3000,10000] [--pairs 3] [--what expiry,dangling] [--server-pid PID ...]

One local Spark session (the local runner's settings: local[2], UI off) loads the job in DIR as
a module (as phases.py does) and, for each N of `--files`, builds 2 × `--pairs` identical
fresh tables of each kind up front, then runs the job's task on them through `run_in_session`,
alternating the driver path (override N × 10) and the Spark path (override 0), one table per
run. Kinds:

- `expiry`: format 2, one write of N data files (1,000 rows each: a 1-byte target file size
  rolls the writer at its 1,000-row check), four one-file appends, a copy-on-write `DELETE`
  of the first 2,500 ids (two files dropped by metadata, one rewritten): 6 snapshots; the job's
  `cleanup` with `olderThan` now and `retainLast` 1 (table max snapshot age 1 ms) expires 5,
  rewriting-away the big manifest, so both paths read every live file's manifest entry.
- `dangling`: format 2, merge-on-read, the same N data files, a `DELETE` of one row in each of
  the first D = max(10, N / 100) files (D file-scoped position-delete files), those D files
  rewritten into one with `rewrite_data_files` (`rewrite-all`): the D delete files are dangling. The
  job's `merge` is run with thresholds no file group meets (nothing rewritten), so the task is
  the rewrite's planning (the same on both paths) plus the dangling-delete removal, which is
  also timed apart (phase `dangling`).
- `compacted` (`--what compacted`, slow to build: every table writes its own N files): format 2,
  N data files of its own, two one-file appends, all of them compacted into one file by
  `rewrite_data_files`: the `cleanup` deletes N + 2 data files from a table of one live file.

One JSON line per run on stdout: N, live files (the before figures), the path asked and the
path the job reports (`ranIn`), CPU-s of the driver JVM + this Python (/proc, as the job's
`cpuSeconds`), wall-s, CPU-s of `--server-pid` processes (the REST catalog, moto) apart, the
1-minute load at the start, and the job's counts (which must be equal on both paths).
Summarise with `--summary FILE...` (medians by N, kind, path).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import uuid

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, "..", "..", "test", "fixtures"))

from phases import Clock, instrument, load_job  # noqa: E402
from session import catalog_properties, find_iceberg_jar  # noqa: E402

ROWS_PER_FILE = 1000
APPENDS = 4
SEED_BASE = 10**8
APPEND_BASE = 9 * 10**8


def session(catalog: str, uri: str, properties: dict[str, str]):
    from pyspark.sql import SparkSession

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    prefix = f"spark.sql.catalog.{catalog}"
    builder = (
        SparkSession.builder.appName("icepack-driver-bound")
        .master("local[2]")
        .config("spark.jars", find_iceberg_jar())
        .config("spark.driver.memory", "1536m")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
        .config(prefix, "org.apache.iceberg.spark.SparkCatalog")
        .config(f"{prefix}.type", "rest")
        .config(f"{prefix}.uri", uri)
        .config(f"{prefix}.cache-enabled", "false")
    )
    for key, value in properties.items():
        builder = builder.config(f"{prefix}.{key}", value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def dangling_count(n: int) -> int:
    return max(10, n // 100)


def write_seed(spark, sql: str, n: int) -> None:
    """The shared data files: n files of 1,000 rows (ids SEED_BASE …), written once."""
    props = "'format-version'='2', 'write.distribution-mode'='none', 'write.target-file-size-bytes'='1'"
    spark.sql(f"CREATE TABLE {sql} (id BIGINT) USING iceberg TBLPROPERTIES ({props})")
    spark.range(SEED_BASE, SEED_BASE + n * ROWS_PER_FILE, 1, 2).writeTo(sql).append()


def seed_files(spark, seed_table, n: int) -> list:
    """The seed's first n data files (ids SEED_BASE … SEED_BASE + n × 1,000), as Java DataFiles."""
    jvm = spark.sparkContext._jvm
    scan = seed_table.newScan().includeColumnStats().filter(jvm.org.apache.iceberg.expressions.Expressions.lessThan("id", SEED_BASE + n * ROWS_PER_FILE))
    files = []
    it = scan.planFiles().iterator()
    while it.hasNext():
        files.append(it.next().file())
    if len(files) != n:
        raise RuntimeError(f"the seed gave {len(files)} files under {n} × {ROWS_PER_FILE} rows")
    return files


def fast_append(table, files: list) -> None:
    append = table.newFastAppend()
    for f in files:
        append.appendFile(f)
    append.commit()


def create_table(spark, job, catalog: str, ns: str, name: str, kind: str, n: int, shared: list) -> None:
    """A fresh table of `kind` with n live data files, N − 3 (expiry) or n (dangling) of them
    the seed's (shared by every table: no task here deletes them), the rest its own;
    `compacted`: all its own."""
    sql = f"`{catalog}`.`{ns}`.`{name}`"
    props = {
        "format-version": "2",
        "write.distribution-mode": "none",
        "history.expire.max-snapshot-age-ms": "1",
        "write.target-file-size-bytes": "1",
    }
    if kind == "dangling":
        props.update({"write.delete.mode": "merge-on-read", "write.update.mode": "merge-on-read"})
    tbl = ", ".join(f"'{k}'='{v}'" for k, v in props.items())
    spark.sql(f"CREATE TABLE {sql} (id BIGINT) USING iceberg TBLPROPERTIES ({tbl})")
    table = job.load_table(spark, catalog, {"namespace": [ns], "name": name})
    if kind == "expiry":
        # Its own three files (ids 0 … 2,999), written beside it, appended with the seed's in
        # one commit: one manifest of n entries, which the DELETE below rewrites.
        own_sql = f"`{catalog}`.`{ns}`.`{name}_own`"
        spark.sql(f"CREATE TABLE {own_sql} (id BIGINT) USING iceberg TBLPROPERTIES ({tbl})")
        spark.range(0, 3 * ROWS_PER_FILE, 1, 1).writeTo(own_sql).append()
        own = job.load_table(spark, catalog, {"namespace": [ns], "name": f"{name}_own"})
        own_files = []
        it = own.currentSnapshot().addedDataFiles(own.io()).iterator()
        while it.hasNext():
            own_files.append(it.next())
        fast_append(table, own_files + shared[: n - 3])
        for a in range(APPENDS):
            spark.range(APPEND_BASE + a * 10, APPEND_BASE + a * 10 + 10, 1, 1).writeTo(sql).append()
        spark.sql(f"DELETE FROM {sql} WHERE id < 2500")
    elif kind == "compacted":
        # Its own n files, two appends, then every file compacted into one: the cleanup deletes
        # n + 2 data files while the table has one live file (the bound reads the live files).
        spark.range(0, n * ROWS_PER_FILE, 1, 2).writeTo(sql).append()
        for a in range(2):
            spark.range(APPEND_BASE + a * 10, APPEND_BASE + a * 10 + 10, 1, 1).writeTo(sql).append()
        spark.sql(
            f"CALL `{catalog}`.system.rewrite_data_files(table => '{ns}.{name}', "
            "options => map('rewrite-all', 'true', 'target-file-size-bytes', '536870912'))"
        ).collect()
    else:
        fast_append(table, shared[:n])
        d = dangling_count(n)
        top = SEED_BASE + d * ROWS_PER_FILE
        spark.sql(f"DELETE FROM {sql} WHERE id < {top} AND id % {ROWS_PER_FILE} = 0")
        spark.sql(
            f"CALL `{catalog}`.system.rewrite_data_files(table => '{ns}.{name}', "
            f"where => 'id < {top}', options => map('rewrite-all', 'true', 'target-file-size-bytes', '134217728'))"
        ).collect()


def task_for(kind: str, catalog: str, ns: str, name: str, table_uuid: str) -> dict:
    table = {"catalog": catalog, "namespace": [ns], "name": name}
    state = {"tableUuid": table_uuid}
    if kind != "dangling":
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 2))
        return {
            "id": f"cleanup/{ns}/{name}",
            "type": "cleanup",
            "table": table,
            "state": state,
            "parameters": {"olderThan": now, "retainLast": 1},
        }
    gib = 2**30
    return {
        "id": f"merge/{ns}/{name}",
        "type": "merge",
        "table": table,
        "state": state,
        # No file group meets these: nothing is rewritten, the dangling-delete removal runs.
        "parameters": {
            "targetFileSizeBytes": 4 * gib,
            "minFileSizeBytes": 3 * gib,
            "maxFileSizeBytes": 6 * gib,
            "minInputFiles": 10**9,
            "deleteFileThreshold": 10**9,
            "rewritePositionDeletes": False,
        },
    }


def loadavg() -> float:
    with open("/proc/loadavg", encoding="utf-8") as f:
        return float(f.read().split()[0])


def summary(paths: list[str]) -> None:
    groups: dict[tuple, list[dict]] = {}
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if not line.startswith("{"):
                    continue
                r = json.loads(line)
                if r.get("kind") != "run":
                    continue
                groups.setdefault((r["storage"], r["what"], r["n"], r["path"]), []).append(r)
    print("| storage | task | N | live files | path | n | CPU-s median (range) | wall-s median (range) | phase CPU-s / wall-s | server CPU-s | load |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for key in sorted(groups, key=lambda k: (k[0], k[1], k[2], k[3])):
        rs = groups[key]
        cpu = [r["cpu"] for r in rs]
        wall = [r["wall"] for r in rs]
        ph = [r["phase"] for r in rs]
        loads = [r["load1"] for r in rs]
        print(
            f"| {key[0]} | {key[1]} | {key[2]:,} | {rs[0]['liveFiles']:,} | {key[3]} | {len(rs)} "
            f"| {statistics.median(cpu):.2f} ({min(cpu):.2f}–{max(cpu):.2f}) "
            f"| {statistics.median(wall):.2f} ({min(wall):.2f}–{max(wall):.2f}) "
            f"| {statistics.median(p[1] for p in ph):.2f} / {statistics.median(p[0] for p in ph):.2f} "
            f"| {statistics.median(r['serverCpu'] for r in rs):.2f} "
            f"| {min(loads):.1f}–{max(loads):.1f} |"
        )
    # The counts: one distinct outcome per (storage, task, N) across paths, or a defect.
    by_point: dict[tuple, set[str]] = {}
    for key, rs in groups.items():
        for r in rs:
            counts = {k: v for k, v in r["counts"].items() if k not in ("olderThan", "retainLast")}
            outcome = {"counts": counts, "before": r["before"], "after": r["after"]}
            by_point.setdefault((key[0], key[1], key[2]), set()).add(json.dumps(outcome, sort_keys=True))
    for point, outcomes in sorted(by_point.items()):
        print(f"counts {point}: {'same on every run' if len(outcomes) == 1 else 'DIFFER'}: {' / '.join(sorted(outcomes))}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--job-dir")
    parser.add_argument("--catalog-uri")
    parser.add_argument("--catalog", default="bench")
    parser.add_argument("--catalog-property", action="append", default=[])
    parser.add_argument("--storage", default="local", help="a label for the result lines")
    parser.add_argument("--files", default="1000,3000,10000")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--what", default="expiry,dangling")
    parser.add_argument("--server-pid", type=int, action="append", default=[])
    parser.add_argument("--summary", nargs="+", help="summarise these result files and exit")
    args = parser.parse_args()
    if args.summary:
        summary(args.summary)
        return

    job = load_job(args.job_dir)
    spark = session(args.catalog, args.catalog_uri, catalog_properties(args.catalog_property))
    jvm_pid = int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())
    clock = Clock(job, [jvm_pid, os.getpid()])
    clock.count_calls(spark.sparkContext._gateway._gateway_client)
    instrument(job, clock)
    ns = "db" + uuid.uuid4().hex[:8]
    spark.sql(f"CREATE NAMESPACE `{args.catalog}`.`{ns}`")
    kinds = args.what.split(",")
    sizes = [int(s) for s in args.files.split(",")]

    def server_cpu() -> float:
        return job.process_cpu_seconds(args.server_pid) or 0.0 if args.server_pid else 0.0

    def run(kind: str, name: str, n: int, path: str, report: bool) -> None:
        override = n * 10 if path == "driver" else 0
        jargs = argparse.Namespace(
            catalog_name=args.catalog,
            max_concurrent_file_group_rewrites=None,
            driver_expiry_max_files=override,
            driver_dangling_max_files=override,
        )
        table_uuid = str(job.load_table(spark, args.catalog, {"namespace": [ns], "name": name}).uuid())
        task = task_for(kind, args.catalog, ns, name, table_uuid)
        if kind != "dangling":
            time.sleep(2.2)  # the cutoff (now + 2 s) is past the table's last snapshot
        clock.phases, clock.phase_calls = {}, {}
        load1 = loadavg()
        wall0, cpu0, srv0 = time.monotonic(), clock.cpu(), server_cpu()
        payload = job.run_in_session(spark, jargs, task, time.monotonic(), 0.0)
        wall, cpu, srv = time.monotonic() - wall0, clock.cpu() - cpu0, server_cpu() - srv0
        if kind != "dangling":
            counts = dict(payload["expireSnapshots"])
            ran = counts.pop("ranIn")
            counts.pop("olderThan")  # the run's own cutoff
            counts.pop("retainLast")
            phase = clock.phases.get("expire", [0.0, 0.0])
        else:
            counts = dict(payload["removeDanglingDeleteFiles"])
            ran = counts.pop("ranIn")
            # The driver path reports one more key (all its finds); compare what both report.
            counts.pop("danglingDeleteFilesRemoved", None)
            counts["rewrittenDataFiles"] = payload["rewriteDataFiles"]["rewrittenDataFiles"]
            phase = [0.0, 0.0]
            for label in ("dangling", "dangling-driver", "dangling-scan"):
                if label in clock.phases:
                    phase = [phase[0] + clock.phases[label][0], phase[1] + clock.phases[label][1]]
        if report:
            line = {
                "kind": "run",
                "storage": args.storage,
                "what": kind,
                "n": n,
                "liveFiles": payload["before"]["dataFiles"] + payload["before"]["deleteFiles"],
                "path": path,
                "ranIn": ran,
                "cpu": round(cpu, 3),
                "wall": round(wall, 3),
                "phase": [round(phase[0], 3), round(phase[1], 3)],
                "serverCpu": round(srv, 3),
                "load1": load1,
                "py4jCalls": sum(clock.phase_calls.values()),
                "counts": counts,
                "before": {k: payload["before"][k] for k in ("dataFiles", "deleteFiles", "snapshots") if k in payload["before"]},
                "after": {k: payload["after"][k] for k in ("dataFiles", "deleteFiles", "snapshots") if k in payload["after"]},
                "at": time.strftime("%H:%M:%S", time.gmtime()),
            }
            print(json.dumps(line), flush=True)

    def build(prefix: str, kind: str, n: int, count: int) -> list[str]:
        names = []
        t0 = time.monotonic()
        shared = [] if kind == "compacted" else seed_files(spark, seed, n)
        for i in range(count):
            name = f"{prefix}_{kind}_{n}_{i}"
            create_table(spark, job, args.catalog, ns, name, kind, n, shared)
            names.append(name)
        print(json.dumps({"kind": "built", "what": kind, "n": n, "tables": count, "seconds": round(time.monotonic() - t0, 1)}), file=sys.stderr, flush=True)
        return names

    t0 = time.monotonic()
    seed = None
    if set(kinds) - {"compacted"}:
        write_seed(spark, f"`{args.catalog}`.`{ns}`.`seed`", max(sizes))
        seed = job.load_table(spark, args.catalog, {"namespace": [ns], "name": "seed"})
        print(json.dumps({"kind": "seed", "files": max(sizes), "seconds": round(time.monotonic() - t0, 1)}), file=sys.stderr, flush=True)

    # Warm-up: both paths of each kind on small tables, not reported.
    for kind in kinds:
        for i, name in enumerate(build("warm", kind, 100, 4)):
            run(kind, name, 100, "driver" if i % 2 == 0 else "spark", report=False)

    for n in sizes:
        for kind in kinds:
            names = build("t", kind, n, 2 * args.pairs)
            for i, name in enumerate(names):
                # Alternating, the first of each pair switching sides: D S S D D S …
                pair, second = divmod(i, 2)
                driver_first = pair % 2 == 0
                path = "driver" if (second == 0) == driver_first else "spark"
                run(kind, name, n, path, report=True)
    spark.stop()


if __name__ == "__main__":
    main()
