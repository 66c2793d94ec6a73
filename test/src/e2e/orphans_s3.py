"""The orphans task on a table on S3 while a writer commits, in one Spark session
(orphans-s3.int.test.ts asserts on what this prints).

    python orphans_s3.py --catalog-uri URI --catalog-name NAME --namespace NS \
        --s3-endpoint http://127.0.0.1:19000 --bucket icepack

Builds `NS.orders` (three commits) and `NS.orders_nested`, a table whose location is inside
orders' own; plants an unreferenced file in each location; takes a cutoff after all of them
(moto's clock, whole seconds); plants a young unreferenced file after the cutoff; then runs the
job's orphans operation on `orders` with a clock a day past the cutoff — so what exists by the
cutoff is "old" and the writer's and the young file are not, as in production a day later —
while a writer thread appends to `orders`. The writer commits at least once between the listing
and the moves (the job's `before_moves` hook waits for it).
Then restores the quarantine run with the job's `--restore-run` code path; quarantines again
with a second cutoff taken after the restore (a restored file is new to the store, so young
again); runs the task through `run_in_session` with the real clock (nothing a day old: nothing
moves, the quarantine is kept within its window); and runs once more with a clock past the
quarantine window, which purges it. Prints one JSON line of facts.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "fixtures"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "jobs", "spark"))

import icepack_job as job  # noqa: E402
from session import CatalogOptions, build_session, table_sql_name  # noqa: E402


def row_lines(spark, name: str) -> list[str]:
    return sorted(json.dumps([r["id"], r["v"]]) for r in spark.table(name).select("id", "v").collect())


def digest(lines: list[str]) -> dict:
    lines = sorted(lines)
    return {"rows": len(lines), "sha256": hashlib.sha256("\n".join(lines).encode()).hexdigest()}


def checksum(spark, name: str) -> dict:
    return digest(row_lines(spark, name))


def referenced(spark, name: str) -> set[str]:
    """Every file the table's metadata references: data and delete files of all snapshots,
    manifests, manifest lists, metadata files (the metadata tables Iceberg offers)."""
    paths: set[str] = set()
    for sql, column in (
        (f"SELECT file_path FROM {name}.all_files", "file_path"),
        (f"SELECT path FROM {name}.all_manifests", "path"),
        (f"SELECT manifest_list FROM {name}.snapshots", "manifest_list"),
        (f"SELECT file FROM {name}.metadata_log_entries", "file"),
    ):
        paths.update(str(row[column]) for row in spark.sql(sql).collect())
    return paths


def store_clock_after(store, io, probe: str, newest_ms: int) -> int:
    """The S3 store's clock (moto stamps objects with its own time, whole seconds), strictly
    after `newest_ms`: a cutoff that every file written so far is older than."""
    cutoff = 0
    while cutoff <= newest_ms:
        time.sleep(0.5)
        store.write_text(probe, "clock")
        cutoff = next(int(i.createdAtMillis()) for i in job._each(io.listPrefix(probe)))
    store.delete(probe)
    return cutoff


def newest_ms(io, location: str) -> int:
    return max(int(info.createdAtMillis()) for info in job._each(io.listPrefix(location)))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--catalog-uri", required=True)
    parser.add_argument("--catalog-name", required=True)
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--s3-endpoint", required=True)
    parser.add_argument("--bucket", required=True)
    args = parser.parse_args()
    props = {"s3.endpoint": args.s3_endpoint, "s3.path-style-access": "true", "client.region": "us-east-1"}
    spark = build_session(CatalogOptions(args.catalog_uri, args.catalog_name, properties=props), app_name="icepack-orphans-s3")
    cat, ns = args.catalog_name, args.namespace
    orders, nested = table_sql_name(cat, [ns], "orders"), table_sql_name(cat, [ns], "orders_nested")
    facts: dict = {}
    try:
        spark.sql(f"CREATE NAMESPACE {table_sql_name(cat, [], ns)}")
        spark.sql(f"CREATE TABLE {orders} (id BIGINT, v STRING) USING iceberg TBLPROPERTIES ('format-version'='2')")
        for commit in range(3):
            spark.sql(f"INSERT INTO {orders} VALUES ({commit * 10 + 1}, 'a{commit}'), ({commit * 10 + 2}, 'b{commit}')")
        table = job.load_table(spark, cat, {"namespace": [ns], "name": "orders"})
        location = str(table.location())
        spark.sql(f"CREATE TABLE {nested} (id BIGINT, v STRING) USING iceberg LOCATION '{location}/nested'")
        spark.sql(f"INSERT INTO {nested} VALUES (7, 'n')")
        io = table.io()
        store = job.FileIOStore(spark, io)
        planted = f"{location}/data/00000-0-planted-orphan.parquet"
        planted_nested = f"{location}/nested/data/planted-in-nested.parquet"
        for path in (planted, planted_nested):
            store.write_text(path, f"not a parquet file: an orphan at {path}")
        listed_before = {path for path, _ in store.list(location)}
        # The cutoff: moto's clock strictly after every file above (its times are whole seconds).
        probe = f"s3://{args.bucket}/probes/{ns}/clock"
        cutoff = store_clock_after(store, io, probe, newest_ms(io, location))
        # Young: written at or after the cutoff, so not older than it (Iceberg's test is `<`).
        young = f"{location}/data/00001-0-young-orphan.parquet"
        young_text = f"not a parquet file: a young orphan at {young}"
        store.write_text(young, young_text)
        planted_text = f"not a parquet file: an orphan at {planted}"
        planted_size = len(planted_text.encode())
        nested_before = sorted(path for path, _ in store.list(f"{location}/nested"))
        orders_lines = row_lines(spark, orders)
        orders_before = digest(orders_lines)
        nested_rows_before = checksum(spark, nested)

        # The writer: appends until told to stop; each commit sets `committed`.
        stop, committed = threading.Event(), threading.Event()
        written: list[tuple[int, str]] = []
        commits = [0]
        errors: list[str] = []

        def writer() -> None:
            n = 1000
            while not stop.is_set():
                try:
                    rows = [(n, f"w{n}"), (n + 1, f"w{n + 1}")]
                    spark.createDataFrame(rows, "id BIGINT, v STRING").writeTo(orders).append()
                    written.extend(rows)
                    commits[0] += 1
                    committed.set()
                    n += 2
                except Exception as error:  # noqa: BLE001 — reported, fails the test
                    errors.append(str(error)[:500])
                    return

        thread = threading.Thread(target=writer, daemon=True)
        task = {
            "id": f"orphans/{cat}/{ns}/orders",
            "type": "orphans",
            "table": {"catalog": cat, "namespace": [ns], "name": "orders"},
            "state": {"tableUuid": str(table.uuid())},
            "parameters": {
                "olderThan": job.format_instant_ms(cutoff),
                "quarantineWindowMs": 7 * job.DAY_MS,
                "maxFiles": 1000,
            },
        }
        now_ms = cutoff + job.DAY_MS
        limits = job.guard_table(task, str(table.uuid()), False, dict(table.properties()), now_ms)
        commits_during: list[int] = []

        def before_moves(candidates: list[str]) -> None:
            # A commit between the listing and the moves: the race the cutoff guards.
            committed.clear()
            committed.wait(120)
            commits_during.append(commits[0])
            facts["candidates"] = candidates

        thread.start()
        committed.wait(120)
        commits_at_start = commits[0]
        outcome = job.run_orphans(spark, cat, table, task, limits, now_ms, before_moves)["orphans"]
        stop.set()
        thread.join(300)
        manifest = json.loads(store.read_text(outcome["manifest"])) if outcome.get("manifest") else None
        moved = [e["path"] for e in (manifest or {}).get("files", []) if e["state"] == "quarantined"]
        live_now = referenced(spark, orders)
        facts.update(
            writerErrors=errors,
            writerCommitsDuringRun=(commits_during[0] - commits_at_start) if commits_during else 0,
            outcome=outcome,
            moved=moved,
            plantedMoved=planted in moved,
            plantedGoneFromLocation=store.size(planted) is None,
            youngMoved=young in moved or young in facts.get("candidates", []),
            youngUntouched=store.read_text(young) == young_text,
            plantedNestedMoved=planted_nested in moved,
            movedNotListedBeforeCutoff=[p for p in moved if p not in listed_before],
            movedButReferenced=sorted(set(moved) & live_now),
            referencedMissing=sorted(p for p in live_now if store.size(p) is None),
            plantedInQuarantine=store.size(job.quarantine_path(location, outcome["run"], planted)) if outcome["run"] else None,
            nestedFilesUnchanged=sorted(path for path, _ in store.list(f"{location}/nested")) == nested_before,
            nestedRowsUnchanged=checksum(spark, nested) == nested_rows_before,
            ordersBefore=orders_before,
            # The table reads as its rows before plus exactly the writer's.
            ordersExpected=digest(orders_lines + [json.dumps(list(r)) for r in written]),
            ordersAfter=checksum(spark, orders),
            writerRows=len(written),
        )

        # Restore through the job's --restore-run path: the planted file is back, byte for byte.
        # The arguments and task as `main` reads them (the session is this one, not a new one).
        args_restore = job.parse_args(["--task-json", json.dumps(task), "--restore-run", outcome["run"]])
        restored = job.restore_run(spark, args_restore, job.parse_task(job.read_task(args_restore)))
        facts.update(
            restore=restored["restore"],
            plantedBack=store.size(planted) == planted_size,
            plantedBackText=store.read_text(planted) == planted_text,
            quarantineLeft=sorted(path for path, _ in store.list(job.quarantine_root(location))),
            ordersAfterRestore=checksum(spark, orders),
        )

        # The second window. A second cutoff after the restore (the restored copy is a new
        # object, young again): the planted and the young file are both old by it.
        cutoff2 = store_clock_after(store, io, probe, newest_ms(io, location))
        now2_ms = cutoff2 + job.DAY_MS
        limits2 = dict(limits, olderThanMs=cutoff2)
        second = job.run_orphans(spark, cat, table, task, limits2, now2_ms)["orphans"]
        second_moved = [
            e["path"] for e in json.loads(store.read_text(second["manifest"]))["files"] if e["state"] == "quarantined"
        ] if second.get("manifest") else []
        in_quarantine = sorted(path for path, _ in store.list(job.quarantine_root(location)))
        # The real path with the real clock: nothing on moto is a day old, so nothing moves,
        # and the second run's quarantine is within its window, so it stays.
        real_task = dict(task, parameters=dict(task["parameters"], olderThan=job.format_instant_ms(int(time.time() * 1000))))
        result = job.run_in_session(spark, argparse.Namespace(catalog_name=cat), real_task, time.monotonic())
        facts["realClock"] = {"ok": result["ok"], "orphans": result["orphans"]}
        facts["quarantineAfterRealClock"] = sorted(path for path, _ in store.list(job.quarantine_root(location)))
        # Past the window: the first run after it deletes the quarantined files and the manifest.
        purge_ms = now2_ms + limits2["quarantineWindowMs"] + 1000
        purge = job.run_orphans(spark, cat, table, task, limits2, purge_ms)["orphans"]
        live_after_purge = referenced(spark, orders)
        facts.update(
            second=second,
            secondMoved=sorted(second_moved),
            secondQuarantine=in_quarantine,
            purge=purge,
            quarantineAfterPurge=sorted(path for path, _ in store.list(job.quarantine_root(location))),
            plantedAfterPurge=store.size(planted),
            youngAfterPurge=store.size(young),
            referencedMissingAfterPurge=sorted(p for p in live_after_purge if store.size(p) is None),
            ordersAfterPurge=checksum(spark, orders),
            nestedFilesAfterPurge=sorted(path for path, _ in store.list(f"{location}/nested")) == nested_before,
            plantedPaths=[planted, young],
        )
    finally:
        spark.stop()
    print(json.dumps(facts), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
