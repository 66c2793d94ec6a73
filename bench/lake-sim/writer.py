"""The lake simulator's writers: one long-lived Spark session that writes ~24 Iceberg tables
the way a lake is written, keeps a checksum of what it wrote, and proves at the end that
Spark reads exactly that back.

    python writer.py --catalog-uri URI --catalog-name NAME --namespace NS --seed N
        --minutes M --policy none|cron|icepack [--cron-minutes K] [--retention-minutes R]
        [--probe-every-minutes P] [--load L] [--threads T]

Protocol with the orchestrator (bench/lake-sim/lake-sim.ts): one JSON object per stdout line
(`kind`: ready, commit, failure, gave-up, cron, probe, deletes, writes-done, verify, done);
commands on stdin, one per line: `go` (start the schedule, after `ready`), `verify` (after
`writes-done`: read every table back, run the last checkpoint, then exit).

What is written is a function of the seed alone: table t's i-th action draws from
random.Random(f"{seed}:{t}:{i}") and from the table's expected content, which only its own
earlier actions changed (one writer thread per table). When it is written is not: actions
are due at fixed offsets, done late when the machine is busy, and retried on failure.
"""

from __future__ import annotations

import argparse
import hashlib
import heapq
import json
import os
import random
import sys
import threading
import time
from dataclasses import dataclass, field

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "test", "fixtures"))

from session import (  # noqa: E402
    CatalogOptions,
    add_catalog_property_argument,
    build_session,
    catalog_properties,
    load_iceberg_table,
    table_sql_name,
)

MASK = (1 << 64) - 1
# The Iceberg field id of `file_path` in a position-delete file (its bounds name the data
# files the deletes point at).
DELETE_FILE_PATH_ID = 2147483546
DAY0 = 19_000  # days since the epoch of the first daily partition (2022-01-08)


def row_hash(key: int, value: str) -> int:
    digest = hashlib.blake2b(f"{key}\x1f{value}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def checksum(rows) -> dict:
    """Count and order-independent hash (sum of row hashes mod 2^64) of (id, value) rows."""
    total = 0
    n = 0
    for key, value in rows:
        total = (total + row_hash(key, value)) & MASK
        n += 1
    return {"rows": n, "hash": f"{total:016x}"}


_out_lock = threading.Lock()
T0 = time.time()


def emit(kind: str, **fields) -> None:
    line = json.dumps({"kind": kind, "t": round(time.time() - T0, 3), **fields}, default=str)
    with _out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


# --- The lake: which tables, how each is written ---------------------------------------

# Seconds between two actions of a table, at --load 1.
PERIODS = {"stream": 20.0, "cdc": 45.0, "batch": 90.0, "evolve": 40.0, "tagged": 30.0}
COUNTS = {"stream": 8, "cdc": 6, "batch": 6, "evolve": 2, "tagged": 2}


@dataclass
class Table:
    name: str
    kind: str
    sql: str
    period: float
    phase: float
    actions: int
    # Expected logical content: id -> value (main branch).
    rows: dict = field(default_factory=dict)
    # batch: day -> ids of that day; tagged: branch content and tag contents.
    days: dict = field(default_factory=dict)
    branch: dict = field(default_factory=dict)
    tags: dict = field(default_factory=dict)
    branch_base: dict = field(default_factory=dict)
    next_id: int = 0
    commits: int = 0
    failures: int = 0
    gave_up: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def lake(args) -> list[Table]:
    tables = []
    seconds = args.minutes * 60.0
    for kind, n in COUNTS.items():
        for k in range(min(n, args.max_per_kind)):
            name = f"{kind}_{k:02d}"
            period = PERIODS[kind] / args.load
            phase = random.Random(f"{args.seed}:{name}:phase").uniform(0, period)
            actions = max(1, int((seconds - phase) // period) + 1)
            sql = table_sql_name(args.catalog_name, [args.namespace], name)
            tables.append(Table(name, kind, sql, period, phase, actions))
    return tables


def props(args, extra: dict | None = None) -> str:
    base = {
        "format-version": "2",
        # The lake's own retention (Iceberg's table properties): what both the cron baseline's
        # expire_snapshots and Icepack's cleanup read.
        "history.expire.max-snapshot-age-ms": str(int(args.retention_minutes * 60_000)),
    }
    base.update(extra or {})
    return ", ".join(f"'{k}'='{v}'" for k, v in base.items())


MOR = {
    "write.delete.mode": "merge-on-read",
    "write.update.mode": "merge-on-read",
    "write.merge.mode": "merge-on-read",
}


def create(spark, t: Table, args) -> None:
    if t.kind == "stream":
        ddl = f"CREATE TABLE {t.sql} (id BIGINT, value STRING, ts TIMESTAMP) USING iceberg TBLPROPERTIES ({props(args)})"
    elif t.kind == "cdc":
        ddl = (
            f"CREATE TABLE {t.sql} (id BIGINT, value STRING, ts TIMESTAMP) USING iceberg "
            f"PARTITIONED BY (bucket(4, id)) TBLPROPERTIES ({props(args, MOR)})"
        )
    elif t.kind == "batch":
        ddl = (
            f"CREATE TABLE {t.sql} (id BIGINT, value STRING, ts TIMESTAMP) USING iceberg "
            f"PARTITIONED BY (days(ts)) TBLPROPERTIES ({props(args)})"
        )
    elif t.kind == "evolve":
        ddl = f"CREATE TABLE {t.sql} (id BIGINT, value STRING, ts TIMESTAMP) USING iceberg TBLPROPERTIES ({props(args)})"
    else:
        ddl = f"CREATE TABLE {t.sql} (id BIGINT, value STRING, ts TIMESTAMP) USING iceberg TBLPROPERTIES ({props(args)})"
    spark.sql(ddl)


def value_of(rng: random.Random) -> str:
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(8, 40)))


def new_rows(t: Table, rng: random.Random, n: int, day: int | None = None) -> list[tuple]:
    import datetime as dt

    out = []
    for _ in range(n):
        key = t.next_id
        t.next_id += 1
        d = day if day is not None else DAY0 + (key % 30)
        ts = dt.datetime(1970, 1, 1) + dt.timedelta(days=d, seconds=rng.randint(0, 86_399))
        out.append((key, value_of(rng), ts))
    return out


def frame(spark, rows: list[tuple], files: int, note: bool = False):
    if note:
        schema = "id BIGINT, value STRING, ts TIMESTAMP, note STRING"
        rows = [(*r, f"n{r[0] % 7}") for r in rows]
    else:
        schema = "id BIGINT, value STRING, ts TIMESTAMP"
    return spark.createDataFrame(rows, schema).repartition(max(1, files))


def append(spark, target: str, df) -> None:
    # distribution-mode none: one file per task, as a streaming writer leaves them.
    df.writeTo(target).option("distribution-mode", "none").append()


class Action:
    """One deterministic action on one table. `apply` writes it; `commit` updates the
    expected content, only after the write succeeded."""

    def __init__(self, t: Table, i: int, args, spark):
        self.t, self.i, self.args, self.spark = t, i, args, spark
        self.rng = random.Random(f"{args.seed}:{t.name}:{i}")
        self.label = "append"
        self.plan()

    def plan(self) -> None:
        t, rng, i = self.t, self.rng, self.i
        self.ddl: list[str] = []
        self.effect = lambda: None
        if t.kind == "stream":
            rows = new_rows(t, rng, rng.randint(20, 200))
            files = rng.randint(1, 4)
            self.write = lambda: append(self.spark, t.sql, frame(self.spark, rows, files))
            self.effect = lambda: t.rows.update({r[0]: r[1] for r in rows})
        elif t.kind == "cdc":
            self.plan_cdc()
        elif t.kind == "batch":
            self.plan_batch()
        elif t.kind == "evolve":
            self.plan_evolve()
        else:
            self.plan_tagged()

    def plan_cdc(self) -> None:
        t, rng = self.t, self.rng
        if not t.rows:
            rows = new_rows(t, rng, 400)
            self.write = lambda: append(self.spark, t.sql, frame(self.spark, rows, 4))
            self.effect = lambda: t.rows.update({r[0]: r[1] for r in rows})
            return
        existing = sorted(t.rows)
        touched = rng.sample(existing, min(len(existing), rng.randint(5, 40)))
        deletes = touched[: len(touched) // 3]
        updates = touched[len(touched) // 3 :]
        inserts = new_rows(t, rng, rng.randint(5, 40))
        import datetime as dt

        now = dt.datetime(2022, 1, 1)
        src = (
            [(k, None, now, "D") for k in deletes]
            + [(k, value_of(rng), now, "U") for k in updates]
            + [(r[0], r[1], r[2], "I") for r in inserts]
        )
        view = f"src_{t.name}"
        self.label = "merge"

        def write():
            df = self.spark.createDataFrame(src, "id BIGINT, value STRING, ts TIMESTAMP, op STRING")
            df.createOrReplaceTempView(view)
            self.spark.sql(
                f"MERGE INTO {t.sql} t USING {view} s ON t.id = s.id "
                "WHEN MATCHED AND s.op = 'D' THEN DELETE "
                "WHEN MATCHED THEN UPDATE SET t.value = s.value, t.ts = s.ts "
                "WHEN NOT MATCHED AND s.op <> 'D' THEN INSERT (id, value, ts) VALUES (s.id, s.value, s.ts)"
            )

        def effect():
            for k in deletes:
                t.rows.pop(k, None)
            for k, v, _, op in src:
                if op != "D":
                    t.rows[k] = v

        self.write, self.effect = write, effect

    def plan_batch(self) -> None:
        t, rng, i = self.t, self.rng, self.i
        # Every fourth load re-loads an earlier day (a late correction: that day's partition
        # is replaced); the others load the next day.
        if i % 4 == 3 and t.days:
            day = sorted(t.days)[rng.randrange(len(t.days))]
            self.label = "overwrite-day"
        else:
            day = DAY0 if not t.days else max(t.days) + 1
        rows = new_rows(t, rng, rng.randint(200, 600), day=day)
        files = rng.randint(2, 4)
        overwrite = self.label == "overwrite-day"

        def write():
            df = frame(self.spark, rows, files)
            if overwrite:
                df.writeTo(t.sql).overwritePartitions()
            else:
                append(self.spark, t.sql, df)

        def effect():
            if overwrite:
                for k in t.days.get(day, set()):
                    t.rows.pop(k, None)
                t.days[day] = set()
            t.days.setdefault(day, set()).update(r[0] for r in rows)
            t.rows.update({r[0]: r[1] for r in rows})

        self.write, self.effect = write, effect

    def plan_evolve(self) -> None:
        t, rng, i, n = self.t, self.rng, self.i, self.t.actions
        # The schema gains a column a third of the way in; the partition spec changes halfway.
        if i == max(1, n // 3):
            self.ddl.append(f"ALTER TABLE {t.sql} ADD COLUMN note STRING")
            self.label = "add-column"
        if i == max(2, n // 2):
            self.ddl.append(f"ALTER TABLE {t.sql} ADD PARTITION FIELD bucket(4, id)")
            self.label = "add-partition-field"
        with_note = i >= max(1, n // 3)
        rows = new_rows(t, rng, rng.randint(20, 150))
        updates = []
        if t.rows and i % 3 == 2:
            updates = [(k, value_of(rng)) for k in rng.sample(sorted(t.rows), min(len(t.rows), 10))]
        files = rng.randint(1, 3)

        def write():
            for stmt in self.ddl:
                self.spark.sql(stmt)
            self.ddl = []  # a retry does not evolve twice
            append(self.spark, t.sql, frame(self.spark, rows, files, note=with_note))

        def effect():
            t.rows.update({r[0]: r[1] for r in rows})

        self.write, self.effect = write, effect
        if updates:
            # A second commit on the same table: an UPDATE (copy-on-write, the default).
            self.updates = updates

    def plan_tagged(self) -> None:
        t, rng, i = self.t, self.rng, self.i
        rows = new_rows(t, rng, rng.randint(20, 120))
        branch_rows = new_rows(t, rng, rng.randint(5, 30)) if i % 2 == 1 else []
        tag = f"release_{i // 5:03d}" if i % 5 == 4 else None
        files = rng.randint(1, 3)

        def write():
            append(self.spark, t.sql, frame(self.spark, rows, files))

        def effect():
            t.rows.update({r[0]: r[1] for r in rows})

        self.write, self.effect = write, effect
        self.branch_rows = branch_rows
        self.tag = tag


def conflict_kind(error: Exception) -> str:
    text = str(error)
    for name in ("CommitFailedException", "ValidationException", "CommitStateUnknownException"):
        if name in text:
            return name
    return type(error).__name__


class Writers:
    def __init__(self, spark, args, tables: list[Table]):
        self.spark, self.args, self.tables = spark, args, tables
        self.stop = threading.Event()
        self.start_at = 0.0
        self.deadline = 0.0
        self.skipped = 0

    def attempt(self, t: Table, what: str, fn) -> bool:
        """Runs `fn` (one commit) until it succeeds, as a writer with retries would: backoff on
        every failure (conflicts with maintenance included), give up after 8 tries."""
        jitter = random.Random()
        for attempt in range(1, 9):
            started = time.time()
            try:
                fn()
                ms = round((time.time() - started) * 1000)
                t.commits += 1
                snap = load_iceberg_table(self.spark, t.sql).currentSnapshot()
                emit(
                    "commit",
                    table=t.name,
                    action=what,
                    attempt=attempt,
                    ms=ms,
                    snapshotId=str(snap.snapshotId()) if snap is not None else None,
                )
                return True
            except Exception as error:  # noqa: BLE001 - every failed commit is counted
                t.failures += 1
                emit(
                    "failure",
                    table=t.name,
                    action=what,
                    attempt=attempt,
                    error=conflict_kind(error),
                    message=str(error).split("\n")[0][:300],
                )
                time.sleep(min(8.0, 0.5 * 2 ** (attempt - 1)) * (0.5 + jitter.random()))
        t.gave_up += 1
        emit("gave-up", table=t.name, action=what)
        return False

    def run_action(self, t: Table, i: int) -> None:
        a = Action(t, i, self.args, self.spark)
        with t.lock:
            if not self.attempt(t, a.label, a.write):
                return
            a.effect()
            updates = getattr(a, "updates", [])
            if updates:
                view = f"upd_{t.name}"

                def update():
                    self.spark.createDataFrame(updates, "id BIGINT, value STRING").createOrReplaceTempView(view)
                    self.spark.sql(
                        f"MERGE INTO {t.sql} t USING {view} s ON t.id = s.id WHEN MATCHED THEN UPDATE SET t.value = s.value"
                    )

                if self.attempt(t, "update", update):
                    t.rows.update(dict(updates))
            branch_rows = getattr(a, "branch_rows", [])
            if branch_rows:
                target = f"{t.sql}.`branch_audit`"
                if self.attempt(t, "branch-append", lambda: append(self.spark, target, frame(self.spark, branch_rows, 1))):
                    t.branch.update({r[0]: r[1] for r in branch_rows})
            tag = getattr(a, "tag", None)
            if tag is not None:
                if self.attempt(t, "create-tag", lambda: self.spark.sql(f"ALTER TABLE {t.sql} CREATE TAG `{tag}`")):
                    t.tags[tag] = dict(t.rows)

    def thread(self, mine: list[Table]) -> None:
        heap = [(self.start_at + t.phase + i * t.period, t.name, i) for t in mine for i in range(1, t.actions)]
        heapq.heapify(heap)
        by_name = {t.name: t for t in mine}
        while heap and not self.stop.is_set():
            due, name, i = heapq.heappop(heap)
            if time.time() > self.deadline:
                self.skipped += 1 + len(heap)
                return
            delay = due - time.time()
            if delay > 0 and self.stop.wait(delay):
                return
            self.run_action(by_name[name], i)

    def run(self) -> None:
        # Actions are done late when the machine is busy; past this the rest is skipped (and
        # counted), so one slow run cannot go on for ever.
        self.deadline = self.start_at + self.args.minutes * 60 * 1.5 + 120
        groups = [self.tables[k :: self.args.threads] for k in range(self.args.threads)]
        threads = [threading.Thread(target=self.thread, args=(g,), daemon=True) for g in groups]
        for th in threads:
            th.start()
        for th in threads:
            th.join()


# --- Checkpoints: query probe, live and dangling deletes, cron maintenance -------------

PROBE_TABLES = ["stream_00", "cdc_00", "batch_00", "evolve_00", "tagged_00"]


def probe(spark, tables: list[Table], label: str) -> None:
    by_name = {t.name: t for t in tables}
    for name in PROBE_TABLES:
        t = by_name[name]
        for query, sql in (
            ("full-scan", f"SELECT count(*), sum(length(value)) FROM {t.sql}"),
            ("point-lookup", f"SELECT value FROM {t.sql} WHERE id = 7"),
        ):
            started = time.perf_counter()
            try:
                spark.sql(sql).collect()
                emit("probe", checkpoint=label, table=name, query=query, ms=round((time.perf_counter() - started) * 1000))
            except Exception as error:  # noqa: BLE001 - a failed probe is reported, not fatal
                emit("probe", checkpoint=label, table=name, query=query, ms=None, error=str(error)[:200])


def deletes(spark, tables: list[Table], label: str) -> None:
    """Live and dangling delete files per table, from its metadata tables: a position-delete
    file is dangling when no live data file is among the files it points at (its
    referenced_data_file, else the bounds of its file_path column). Only the merge-on-read
    tables write delete files; the others are not read (it costs Spark time)."""
    for t in tables:
        if t.kind != "cdc":
            continue
        try:
            live_paths = sorted(r[0] for r in spark.sql(f"SELECT file_path FROM {t.sql}.data_files").collect())
            rows = spark.sql(
                f"SELECT content, referenced_data_file, lower_bounds[{DELETE_FILE_PATH_ID}], "
                f"upper_bounds[{DELETE_FILE_PATH_ID}] FROM {t.sql}.delete_files"
            ).collect()
        except Exception as error:  # noqa: BLE001
            emit("deletes", checkpoint=label, table=t.name, error=str(error)[:200])
            continue
        live_set = set(live_paths)
        dangling = 0
        equality = 0
        for content, referenced, lo, hi in rows:
            if content == 2:
                equality += 1
                continue
            if referenced is not None:
                dangling += referenced not in live_set
            elif lo is not None and hi is not None:
                lo_s, hi_s = bytes(lo).decode(), bytes(hi).decode()
                dangling += not any(lo_s <= p <= hi_s for p in live_paths)
        emit(
            "deletes",
            checkpoint=label,
            table=t.name,
            deleteFiles=len(rows),
            dangling=dangling,
            live=len(rows) - dangling,
            equality=equality,
        )


def cron_pass(spark, args, tables: list[Table], label: str, done: threading.Event) -> None:
    """What a team schedules by hand: every table, rewrite_data_files then expire_snapshots
    (retention from the table's own properties). Stops between tables once writing ended."""
    cat = args.catalog_name
    for t in tables:
        if done.is_set():
            return
        ident = f"{args.namespace}.{t.name}"
        for proc, call in (
            ("rewrite_data_files", f"CALL `{cat}`.system.rewrite_data_files(table => '{ident}')"),
            ("expire_snapshots", f"CALL `{cat}`.system.expire_snapshots(table => '{ident}')"),
        ):
            started = time.time()
            try:
                result = spark.sql(call).collect()
                row = result[0].asDict() if result else {}
                emit("cron", round=label, table=t.name, procedure=proc, ms=round((time.time() - started) * 1000), ok=True, result=row)
            except Exception as error:  # noqa: BLE001 - a failed maintenance call is reported
                emit(
                    "cron",
                    round=label,
                    table=t.name,
                    procedure=proc,
                    ms=round((time.time() - started) * 1000),
                    ok=False,
                    error=conflict_kind(error),
                    message=str(error).split("\n")[0][:300],
                )


def checkpoints(spark, args, tables: list[Table], writers: Writers, done: threading.Event) -> None:
    """Probe and delete counts every --probe-every-minutes; with --policy cron, a maintenance
    pass every --cron-minutes. Runs in its own thread beside the writers."""
    start = writers.start_at
    next_probe = start + args.probe_every_minutes * 60
    next_cron = start + args.cron_minutes * 60 if args.policy == "cron" else float("inf")
    k = 0
    while not done.is_set():
        now = time.time()
        if now >= next_cron:
            k += 1
            cron_pass(spark, args, tables, f"cron-{k}", done)
            next_cron += args.cron_minutes * 60
        elif now >= next_probe:
            label = f"t+{round((now - start) / 60)}m"
            probe(spark, tables, label)
            deletes(spark, tables, label)
            next_probe += args.probe_every_minutes * 60
        done.wait(max(0.5, min(next_probe, next_cron) - time.time()))


def verify(spark, tables: list[Table]) -> None:
    def read(target: str) -> list:
        return [(r[0], r[1]) for r in spark.sql(f"SELECT id, value FROM {target}").collect()]

    def compare(t: Table, ref: str, expected: dict, actual: list) -> None:
        seen: dict = {}
        for key, value in actual:
            seen.setdefault(key, []).append(value)
        missing = sum(1 for k in expected if k not in seen)
        extra = sum(1 for k in seen if k not in expected)
        duplicated = sum(len(v) - 1 for v in seen.values() if len(v) > 1)
        changed = sum(1 for k, v in seen.items() if k in expected and v[0] != expected[k])
        want = checksum(expected.items())
        got = checksum(actual)
        emit(
            "verify",
            table=t.name,
            ref=ref,
            expected=want,
            actual=got,
            ok=want == got,
            missing=missing,
            extra=extra,
            duplicated=duplicated,
            changed=changed,
        )

    for t in tables:
        compare(t, "main", t.rows, read(t.sql))
        if t.kind == "tagged":
            compare(t, "branch_audit", {**t.branch_base, **t.branch}, read(f"{t.sql}.`branch_audit`"))
            for tag, rows in sorted(t.tags.items()):
                compare(t, f"tag:{tag}", rows, read(f"{t.sql} VERSION AS OF '{tag}'"))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--catalog-uri", required=True)
    parser.add_argument("--catalog-name", required=True)
    add_catalog_property_argument(parser)
    parser.add_argument("--namespace", default="lake")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--minutes", type=float, required=True)
    parser.add_argument("--policy", choices=["none", "cron", "icepack"], required=True)
    parser.add_argument("--cron-minutes", type=float, default=10.0)
    parser.add_argument("--retention-minutes", type=float, default=10.0)
    parser.add_argument("--probe-every-minutes", type=float, default=5.0)
    parser.add_argument("--load", type=float, default=1.0)
    parser.add_argument("--threads", type=int, default=3)
    parser.add_argument("--max-per-kind", type=int, default=max(COUNTS.values()))
    args = parser.parse_args()

    os.environ.setdefault("ICEPACK_SPARK_DRIVER_MEMORY", "2g")
    properties = catalog_properties(args.catalog_property)
    spark = build_session(
        CatalogOptions(args.catalog_uri, args.catalog_name, properties=properties), app_name="icepack-lake-sim"
    )
    tables = lake(args)
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS `{args.catalog_name}`.`{args.namespace}`")
    for t in tables:
        create(spark, t, args)
    writers = Writers(spark, args, tables)
    # Action 0 of every table: its first load, before the clock starts.
    for t in tables:
        writers.run_action(t, 0)
        if t.kind == "tagged":
            spark.sql(f"ALTER TABLE {t.sql} CREATE BRANCH `audit`")
            t.branch_base = dict(t.rows)
    emit(
        "ready",
        tables=[{"name": t.name, "kind": t.kind, "periodSeconds": t.period, "actions": t.actions} for t in tables],
    )
    probe(spark, tables, "t+0m")
    deletes(spark, tables, "t+0m")
    for line in sys.stdin:
        if line.strip() == "go":
            break
    else:
        return 2

    done = threading.Event()
    writers.start_at = time.time()
    checker = threading.Thread(target=checkpoints, args=(spark, args, tables, writers, done), daemon=True)
    checker.start()
    writers.run()
    done.set()
    checker.join()
    emit(
        "writes-done",
        commits=sum(t.commits for t in tables),
        failures=sum(t.failures for t in tables),
        gaveUp=sum(t.gave_up for t in tables),
        skipped=writers.skipped,
        perTable={t.name: {"commits": t.commits, "failures": t.failures, "gaveUp": t.gave_up, "rows": len(t.rows)} for t in tables},
    )
    for line in sys.stdin:
        if line.strip() == "verify":
            break
    else:
        return 2
    verify(spark, tables)
    probe(spark, tables, "end")
    deletes(spark, tables, "end")
    emit("done")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
