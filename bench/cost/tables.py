"""The cost benchmark's tables: one Spark session creates the fixed set of small and large
tables, reports each table's figures and checksum, and after Icepack has maintained them
(`verify` on stdin) reports them again.

    python tables.py --catalog-uri URI --catalog-name NAME --namespace NS
        --small N --large M [--small-commits C] [--small-files-per-commit F]
        [--large-mb MB] [--large-files F] [--large-commits C]

Protocol with the orchestrator (bench/cost/cost.ts): one JSON object per stdout line
(`kind`: table, ready, verify, done); `verify` on stdin makes it read every table again, then
exit.

The content is a function of the table's position and its row ids alone (no randomness): a table
is created identically in every mode of a run, so the modes maintain the same data.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "test", "fixtures"))

from session import CatalogOptions, build_session, table_sql_name  # noqa: E402

# Two SHA-256 hex digests per row: about 70 bytes per row in Parquet (hex halves under
# compression), so the row count sets a file's size without random data.
VALUE = "concat(sha2(cast(id AS STRING), 256), sha2(cast(id * 7 + 1 AS STRING), 256))"
BYTES_PER_ROW = 70

T0 = time.time()


def emit(kind: str, **fields) -> None:
    sys.stdout.write(json.dumps({"kind": kind, "t": round(time.time() - T0, 3), **fields}) + "\n")
    sys.stdout.flush()


def props() -> str:
    # The tables carry their own maintenance policy (table `icepack.*` properties override the
    # catalog's, docs/planner.md): a handful of files and snapshots make a small table due,
    # where the defaults (20 small files, 50 snapshots) would take 50 commits per table to
    # reach. The services themselves run at their defaults.
    p = {
        "format-version": "2",
        "write.distribution-mode": "none",
        "history.expire.max-snapshot-age-ms": "1000",
        "icepack.small-file-threshold": "2",
        "icepack.snapshot-threshold": "2",
    }
    return ", ".join(f"'{k}'='{v}'" for k, v in p.items())


def create(spark, sql: str, base: int, commits: int, files_per_commit: int, rows_per_file: int) -> None:
    spark.sql(f"CREATE TABLE {sql} (id BIGINT, value STRING) USING iceberg TBLPROPERTIES ({props()})")
    rows = files_per_commit * rows_per_file
    for c in range(commits):
        # One input partition per file, no shuffle (distribution mode none): one file each.
        df = spark.range(base + c * rows, base + (c + 1) * rows, numPartitions=files_per_commit).selectExpr(
            "id", f"{VALUE} AS value"
        )
        df.writeTo(sql).append()


def figures(spark, sql: str) -> dict:
    """Rows and an order-independent checksum (the sum of 64-bit row hashes), files, bytes, snapshots."""
    row = spark.sql(
        f"SELECT count(*) AS n, CAST(coalesce(sum(CAST(xxhash64(id, value) AS DECIMAL(38,0))), 0) AS STRING) AS h FROM {sql}"
    ).collect()[0]
    files = spark.sql(f"SELECT count(*) AS n, coalesce(sum(file_size_in_bytes), 0) AS b FROM {sql}.files").collect()[0]
    snapshots = spark.sql(f"SELECT count(*) AS n FROM {sql}.snapshots").collect()[0]
    return {
        "rows": int(row["n"]),
        "checksum": row["h"],
        "dataFiles": int(files["n"]),
        "bytes": int(files["b"]),
        "snapshots": int(snapshots["n"]),
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--catalog-uri", required=True)
    parser.add_argument("--catalog-name", required=True)
    parser.add_argument("--namespace", default="cost")
    parser.add_argument("--small", type=int, required=True)
    parser.add_argument("--large", type=int, required=True)
    parser.add_argument("--small-commits", type=int, default=3)
    parser.add_argument("--small-files-per-commit", type=int, default=3)
    parser.add_argument("--small-rows-per-file", type=int, default=500)
    parser.add_argument("--large-mb", type=float, default=300)
    parser.add_argument("--large-files", type=int, default=600)
    parser.add_argument("--large-commits", type=int, default=6)
    args = parser.parse_args()

    os.environ.setdefault("ICEPACK_SPARK_DRIVER_MEMORY", "2g")
    spark = build_session(CatalogOptions(args.catalog_uri, args.catalog_name), app_name="icepack-cost-tables")
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS `{args.catalog_name}`.`{args.namespace}`")
    tables = [(f"small_{i:04d}", "small") for i in range(args.small)] + [
        (f"large_{i:02d}", "large") for i in range(args.large)
    ]
    large_per_commit = max(1, args.large_files // args.large_commits)
    large_rows_per_file = max(1, int(args.large_mb * 1024 * 1024 / (large_per_commit * args.large_commits) / BYTES_PER_ROW))
    for i, (name, size) in enumerate(tables):
        sql = table_sql_name(args.catalog_name, [args.namespace], name)
        # Each table's ids start at its own multiple of 2^32: no two tables hold the same rows,
        # so a file committed to the wrong table changes both checksums.
        base = i << 32
        if size == "small":
            create(spark, sql, base, args.small_commits, args.small_files_per_commit, args.small_rows_per_file)
        else:
            create(spark, sql, base, args.large_commits, large_per_commit, large_rows_per_file)
        emit("table", table=name, size=size, before=figures(spark, sql))
    emit("ready")
    for line in sys.stdin:
        if line.strip() == "verify":
            break
    else:
        return 2
    for name, size in tables:
        emit("verify", table=name, size=size, after=figures(spark, table_sql_name(args.catalog_name, [args.namespace], name)))
    emit("done")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
