"""One Spark session for partition-rewrite.int.test.ts: builds small partitioned tables (and one
unpartitioned table for a z-order rewrite), then runs the job's own rewrite
(icepack_job.run_rewrite) for each task it is sent, reporting the table's files (with each file's
lower and upper bounds of the z-order columns) and a row checksum before and after. One JVM for
every case, instead of one spark-submit each.

    python partition_rewrite.py --catalog-uri U --catalog-name C --namespace NS

Protocol: one JSON line per message on stdout, prefixed with `@@ ` (Spark may print too):
`{"ready": true}` once the tables exist; then for each stdin line `{"task": {...}}` one
`{"before": …, "after": …, "result": …}` or `{"error": "…"}`; an empty line or EOF stops.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

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
TABLES = ("by_region", "by_day", "by_hour", "by_bucket", "evolved", "zordered")
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
CHECKSUM_COLUMNS = {"zordered": "id, x, y, v"}
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
    # Three commits of rows in every partition: three small files per partition at least.
    for commit in range(3):
        rows = [
            (commit * 100 + i, ["eu", "us", "apac"][i % 3], f"2026-01-0{1 + i % 3} {i % 3 + 1:02d}:00:00")
            for i in range(12)
        ]
        for table in ("by_region", "by_day", "by_hour", "by_bucket"):
            spark.sql(f"INSERT INTO {name(table)} {ROWS.format(values=values(rows))}")
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
    for commit in range(8):
        rows = ZORDER_ROWS.format(start=commit * 2500, end=(commit + 1) * 2500)
        spark.sql(f"INSERT INTO {name('zordered')} SELECT /*+ COALESCE(1) */ * FROM ({rows})")


def snapshot(spark, sql_name: str, table: str) -> dict:
    """The table's data files (path, spec, partition as JSON; for the z-order table each file's
    lower and upper bound of x and y) and a checksum of its rows."""
    bounds = table == "zordered"
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
    columns = CHECKSUM_COLUMNS.get(table, "id, region, ts, v")
    row = spark.sql(
        f"SELECT count(*) AS n, sum(cast(xxhash64({columns}) AS DECIMAL(38, 0))) AS h FROM {sql_name}"
    ).collect()[0]
    return {"files": files, "rows": row.n, "checksum": str(row.h)}


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
    try:
        build_tables(spark, args.catalog_name, args.namespace)
        reply({"ready": True})
        for line in sys.stdin:
            if not line.strip():
                break
            task = json.loads(line)["task"]
            t = task["table"]
            sql_name = table_sql_name(args.catalog_name, t["namespace"], t["name"])
            try:
                before = snapshot(spark, sql_name, t["name"])
                table = icepack_job.load_table(spark, args.catalog_name, t)
                result = icepack_job.run_rewrite(spark, table, icepack_job.parse_task(task), None)
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
