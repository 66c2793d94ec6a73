"""One Spark session for partition-rewrite.int.test.ts: builds small partitioned tables (and
unpartitioned tables for z-order and Hilbert rewrites), then runs each task it is sent as the
job's main does (icepack_job.run_in_session: the guard, the rewrite, the dangling-delete removal
in the driver under the job's live-file bound, the result's figures), reporting the table's files (with each file's
lower and upper bounds of the layout columns) and a row checksum before and after. One JVM for
every case, instead of one spark-submit each.

    python partition_rewrite.py --catalog-uri U --catalog-name C --namespace NS

Protocol: one JSON line per message on stdout, prefixed with `@@ ` (Spark may print too):
`{"ready": true}` once the tables exist; then for each stdin line `{"task": {...}}` one
`{"before": …, "after": …, "result": …}` or `{"error": "…"}`; an empty line or EOF stops.
`{"task": {...}, "sparkDangling": true}` runs it with the job's `--driver-dangling-max-files 0`
(the dangling deletes judged by Spark's actions, as for a table at or over the bound).
`{"task": {...}, "concurrentDelete": N}` runs a Hilbert task's rewrite with a writer's
`DELETE … WHERE id < N` committed after the rewrite wrote its files and before it commits; it
replies `{"before", "after", "failure": <the job's result for the error, or null>, "deleted",
"keptChecksum", "leftBelow"}`. `{"hilbertPoints": [[x, y], …]}` replies the Hilbert index of
each cell by Spark SQL (the job's hilbert_index_sql) and by the job's Python reference.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "test", "fixtures"))
sys.path.insert(0, os.path.join(ROOT, "jobs", "spark"))

from session import CatalogOptions, build_session, quote_ident, table_sql_name  # noqa: E402

import icepack_job  # noqa: E402

# Every table: all files small (the 512 MiB default target), thresholds low enough for a few
# files, format v2.
PROPS = (
    "'format-version'='2', 'icepack.small-file-threshold'='2', 'icepack.merge.min-input-files'='2'"
)
# Merge-on-read twins (decision 0054): file-scoped position deletes in every partition, so a
# merge of some partitions leaves dangling deletes, judged in the driver on the first of each
# pair and by Spark's actions on the second (`sparkDangling`).
DANGLING_LAYOUTS = {"dangling_day": "days(ts)", "dangling_bucket": "bucket(4, id)"}
DANGLING_TABLES = tuple(name + twin for name in DANGLING_LAYOUTS for twin in ("", "_spark"))
DANGLING_PROPS = PROPS + ", 'write.delete.mode'='merge-on-read', 'write.delete.granularity'='file'"
TABLES = (
    "by_region", "by_day", "by_hour", "by_bucket", "evolved", "zordered", "hilberted", "hilbert_conflict",
    "by_commits", "by_since", "sort_thin", *DANGLING_TABLES,
)
# The commit-count table: the policy's own file thresholds (20 small files, min-input-files 5),
# so its three commits' 9 small files, 3 per partition, fire only `icepack.merge.max-commits`.
COMMITS_PROPS = "'format-version'='2'"
# Tables measured by their files' bounds of x and y.
LAYOUT_TABLES = ("zordered", "hilberted", "hilbert_conflict")
# The z-order table: x and y spread over [0, 1000) independently of each other and of the
# commit, so every small file spans nearly the whole range of both; a small target file size
# makes the rewrite write several files, whose bounds the test measures.
ZORDER_COLUMNS = ("x", "y")
ZORDER_PROPS = (
    "'format-version'='2', 'icepack.small-file-threshold'='2', 'icepack.merge.min-input-files'='2', "
    "'icepack.target-file-size-bytes'='65536'"
)
ZORDER_ROWS = (
    "SELECT id, CAST(pmod(hash(id, 7), 1000) AS INT) AS x, CAST(pmod(hash(id, 13), 1000) AS INT) AS y, "
    "concat('v', id) AS v FROM range({start}, {end})"
)
CHECKSUM_COLUMNS = {t: "id, x, y, v" for t in LAYOUT_TABLES}
# The conflict table deletes by merge-on-read: position deletes of files the rewrite replaces,
# which only the rewrite's validation from its starting snapshot catches (a copy-on-write
# delete removes the files, which any rewrite commit would find missing).
CONFLICT_PROPS = ZORDER_PROPS + ", 'write.delete.mode'='merge-on-read'"
ROWS = "SELECT id, region, ts, concat('v', id) AS v FROM VALUES {values} AS t(id, region, ts)"


def values(rows: list[tuple[int, str, str]]) -> str:
    return ", ".join(f"({i}, '{r}', TIMESTAMP '{ts}')" for i, r, ts in rows)


def build_tables(spark, catalog: str, namespace: str) -> None:
    def name(table: str) -> str:
        return table_sql_name(catalog, [namespace], table)

    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {quote_ident(catalog)}.{quote_ident(namespace)}")
    layouts = {
        "by_region": "region",
        "by_day": "days(ts)",
        "by_hour": "hours(ts)",
        "by_bucket": "bucket(4, id)",
        "evolved": "region",
    }
    for table, partitioning in layouts.items():
        spark.sql(
            f"CREATE TABLE {name(table)} (id BIGINT, region STRING, ts TIMESTAMP, v STRING) "
            f"USING iceberg PARTITIONED BY ({partitioning}) TBLPROPERTIES ({PROPS})"
        )
    spark.sql(
        f"CREATE TABLE {name('by_commits')} (id BIGINT, region STRING, ts TIMESTAMP, v STRING) "
        f"USING iceberg PARTITIONED BY (region) TBLPROPERTIES ({COMMITS_PROPS})"
    )
    for table in DANGLING_TABLES:
        spark.sql(
            f"CREATE TABLE {name(table)} (id BIGINT, region STRING, ts TIMESTAMP, v STRING) USING iceberg "
            f"PARTITIONED BY ({DANGLING_LAYOUTS[table.removesuffix('_spark')]}) TBLPROPERTIES ({DANGLING_PROPS})"
        )
    # Three commits of rows in every partition: three small files per partition at least.
    for commit in range(3):
        rows = [
            (commit * 100 + i, ["eu", "us", "apac"][i % 3], f"2026-01-0{1 + i % 3} {i % 3 + 1:02d}:00:00")
            for i in range(12)
        ]
        for table in ("by_region", "by_day", "by_hour", "by_bucket", "by_commits", *DANGLING_TABLES):
            spark.sql(f"INSERT INTO {name(table)} {ROWS.format(values=values(rows))}")
    for table in DANGLING_TABLES:
        spark.sql(f"DELETE FROM {name(table)} WHERE id % 4 = 0")
    # The table merged before its commits (ADR 0047): two commits in every region, a rewrite of
    # eu alone (Iceberg's own, a `replace` snapshot), then three commits to eu only. us and
    # apac keep the 2 small files of before the rewrite; eu holds the rewritten file and 3 new.
    spark.sql(
        f"CREATE TABLE {name('by_since')} (id BIGINT, region STRING, ts TIMESTAMP, v STRING) "
        f"USING iceberg PARTITIONED BY (region) TBLPROPERTIES ({COMMITS_PROPS})"
    )
    for commit in range(2):
        rows = [(5000 + commit * 10 + i, ["eu", "us", "apac"][i % 3], "2026-01-01 01:00:00") for i in range(6)]
        spark.sql(f"INSERT INTO {name('by_since')} {ROWS.format(values=values(rows))}")
    spark.sql(
        f"CALL {quote_ident(catalog)}.system.rewrite_data_files(table => '{namespace}.by_since', "
        "where => \"region = 'eu'\", options => map('min-input-files', '2'))"
    )
    for commit in range(3):
        rows = [(6000 + commit * 10 + i, "eu", "2026-01-02 01:00:00") for i in range(3)]
        spark.sql(f"INSERT INTO {name('by_since')} {ROWS.format(values=values(rows))}")
    # A sorted table spread thin: one commit, one row a day over 6 days, so one small file per
    # day partition (the table's 6 small files are above its threshold of 2).
    spark.sql(
        f"CREATE TABLE {name('sort_thin')} (id BIGINT, region STRING, ts TIMESTAMP, v STRING) "
        f"USING iceberg PARTITIONED BY (days(ts)) TBLPROPERTIES ({PROPS})"
    )
    spark.sql(f"ALTER TABLE {name('sort_thin')} WRITE ORDERED BY id")
    thin = [(7000 + d, "eu", f"2026-02-0{d + 1} 01:00:00") for d in range(6)]
    spark.sql(f"INSERT INTO {name('sort_thin')} {ROWS.format(values=values(thin))}")
    # The evolved table: files under spec 0 (region) on 2025-12-31, then day(ts) added and
    # files under spec 1 on later days.
    for commit in range(2):
        old = [(1000 + commit * 10 + i, ["eu", "us"][i % 2], "2025-12-31 12:00:00") for i in range(6)]
        spark.sql(f"INSERT INTO {name('evolved')} {ROWS.format(values=values(old))}")
    spark.sql(f"ALTER TABLE {name('evolved')} ADD PARTITION FIELD days(ts) AS ts_day")
    for commit in range(3):
        new = [
            (2000 + commit * 10 + i, ["eu", "us"][i % 2], f"2026-01-0{1 + i % 2} 08:00:00")
            for i in range(8)
        ]
        spark.sql(f"INSERT INTO {name('evolved')} {ROWS.format(values=values(new))}")
    spark.sql(
        f"CREATE TABLE {name('zordered')} (id BIGINT, x INT, y INT, v STRING) USING iceberg "
        f"TBLPROPERTIES ({ZORDER_PROPS})"
    )
    # The Hilbert table: the z-order table's rows; the conflict table: fewer of them.
    for table, props, commits in (("zordered", ZORDER_PROPS, 8), ("hilberted", ZORDER_PROPS, 8), ("hilbert_conflict", CONFLICT_PROPS, 3)):
        if table != "zordered":
            spark.sql(
                f"CREATE TABLE {name(table)} (id BIGINT, x INT, y INT, v STRING) USING iceberg "
                f"TBLPROPERTIES ({props})"
            )
        for commit in range(commits):
            rows = ZORDER_ROWS.format(start=commit * 2500, end=(commit + 1) * 2500)
            spark.sql(f"INSERT INTO {name(table)} SELECT /*+ COALESCE(1) */ * FROM ({rows})")


def checksum(spark, sql_name: str, table: str, where: str = "true") -> dict:
    columns = CHECKSUM_COLUMNS.get(table, "id, region, ts, v")
    row = spark.sql(
        f"SELECT count(*) AS n, sum(cast(xxhash64({columns}) AS DECIMAL(38, 0))) AS h FROM {sql_name} WHERE {where}"
    ).collect()[0]
    return {"rows": row.n, "checksum": str(row.h)}


def snapshot(spark, sql_name: str, table: str) -> dict:
    """The table's data files (path, spec, partition as JSON; for the z-order table each file's
    lower and upper bound of x and y) and a checksum of its rows."""
    bounds = table in LAYOUT_TABLES
    metrics = "".join(
        f", readable_metrics.{c}.lower_bound AS {c}_lo, readable_metrics.{c}.upper_bound AS {c}_hi"
        for c in (ZORDER_COLUMNS if bounds else ())
    )
    # An unpartitioned table's files table has no `partition` column.
    partition = "'{}'" if bounds else "to_json(partition)"
    files = []
    for r in spark.sql(
        f"SELECT file_path, spec_id, {partition} AS p{metrics} FROM {sql_name}.data_files"
    ).collect():
        f = {"path": r.file_path, "specId": r.spec_id, "partition": json.loads(r.p)}
        if bounds:
            f["bounds"] = {c: [r[f"{c}_lo"], r[f"{c}_hi"]] for c in ZORDER_COLUMNS}
        files.append(f)
    deletes = spark.sql(f"SELECT count(*) AS n FROM {sql_name}.delete_files").collect()[0].n
    return {"files": files, "deleteFiles": deletes, **checksum(spark, sql_name, table)}


def rewrite_with_concurrent_delete(spark, catalog: str, sql_name: str, task: dict, below: int) -> dict:
    """The job's Hilbert rewrite of `task`, with a writer's delete of the rows `id < below`
    committed between the rewrite's writing and its commit."""
    t = task["table"]
    before = snapshot(spark, sql_name, t["name"])
    kept = checksum(spark, sql_name, t["name"], f"id >= {int(below)}")
    table = icepack_job.load_table(spark, catalog, t)
    params = icepack_job.parse_task(task)["parameters"]
    where = icepack_job.rewrite_filter(spark.sparkContext._jvm, table, params)
    deleted = []

    def concurrent_delete() -> None:
        deleted.append(checksum(spark, sql_name, t["name"], f"id < {int(below)}")["rows"])
        spark.sql(f"DELETE FROM {sql_name} WHERE id < {int(below)}")

    failure = None
    try:
        icepack_job.run_hilbert_rewrite(spark, table, params, where, before_commit=concurrent_delete)
    except Exception as error:  # the job's own classification of what the job would report
        failure = icepack_job.failure_payload(task["id"], error)
    return {
        "before": before,
        "after": snapshot(spark, sql_name, t["name"]),
        "failure": failure,
        "deleted": deleted[0] if deleted else None,
        "keptChecksum": kept["checksum"],
        "leftBelow": checksum(spark, sql_name, t["name"], f"id < {int(below)}")["rows"],
    }


def hilbert_points(spark, points: list) -> dict:
    cells = [(int(x), int(y)) for x, y in points]
    row = spark.sql("SELECT " + ", ".join(icepack_job.hilbert_index_sql(str(x), str(y)) for x, y in cells)).collect()[0]
    return {"sql": list(row), "python": [icepack_job.hilbert_index(x, y) for x, y in cells]}


def reply(message: dict) -> None:
    sys.stdout.write("@@ " + json.dumps(message, default=str) + "\n")
    sys.stdout.flush()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--catalog-uri", required=True)
    parser.add_argument("--catalog-name", required=True)
    parser.add_argument("--namespace", required=True)
    args = parser.parse_args()
    spark = build_session(CatalogOptions(args.catalog_uri, args.catalog_name), "icepack-partition-rewrite")
    # The job's own options for its main, at their defaults (the live-file bounds among them).
    job_args = icepack_job.parse_args(["--task-json", "{}", "--catalog-name", args.catalog_name])
    spark_dangling = icepack_job.parse_args(
        ["--task-json", "{}", "--catalog-name", args.catalog_name, "--driver-dangling-max-files", "0"]
    )
    try:
        build_tables(spark, args.catalog_name, args.namespace)
        reply({"ready": True})
        for line in sys.stdin:
            if not line.strip():
                break
            message = json.loads(line)
            if "hilbertPoints" in message:
                reply(hilbert_points(spark, message["hilbertPoints"]))
                continue
            task = message["task"]
            t = task["table"]
            sql_name = table_sql_name(args.catalog_name, t["namespace"], t["name"])
            try:
                if "concurrentDelete" in message:
                    below = message["concurrentDelete"]
                    reply(rewrite_with_concurrent_delete(spark, args.catalog_name, sql_name, task, below))
                    continue
                before = snapshot(spark, sql_name, t["name"])
                options = spark_dangling if message.get("sparkDangling") else job_args
                result = icepack_job.run_in_session(spark, options, icepack_job.parse_task(task), time.monotonic())
                reply({"before": before, "after": snapshot(spark, sql_name, t["name"]), "result": result})
            except Exception as error:  # reported to the test, which fails with it
                reply({"error": f"{type(error).__name__}: {error}"})
    finally:
        for table in TABLES:
            spark.sql(f"DROP TABLE IF EXISTS {table_sql_name(args.catalog_name, [args.namespace], table)} PURGE")
        spark.sql(f"DROP NAMESPACE IF EXISTS {quote_ident(args.catalog_name)}.{quote_ident(args.namespace)}")
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
