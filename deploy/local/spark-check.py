"""Smoke test of the local Spark + Iceberg stack (run by `spark.sh check`).

A local[1] SparkSession with the Iceberg extensions and a REST catalog pointed at the local
catalog server: creates a namespace and a table, inserts rows, reads them back, drops both.
Exits non-zero (with the reason) when any step does not behave.
"""

from __future__ import annotations

import os
import sys
import uuid

from pyspark.sql import SparkSession


def main() -> int:
    jar = os.environ["ICEPACK_SPARK_JARS"]
    uri = os.environ["ICEPACK_CATALOG_URI"]
    namespace = f"spark_check_{uuid.uuid4().hex[:8]}"
    spark = (
        SparkSession.builder.appName("icepack-spark-check")
        .master("local[1]")
        .config("spark.jars", jar)
        .config("spark.driver.memory", "1g")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
        .config("spark.sql.catalog.local", "org.apache.iceberg.spark.SparkCatalog")
        .config("spark.sql.catalog.local.type", "rest")
        .config("spark.sql.catalog.local.uri", uri)
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("WARN")
    try:
        spark.sql(f"CREATE NAMESPACE local.{namespace}")
        spark.sql(f"CREATE TABLE local.{namespace}.t (id BIGINT, name STRING) USING iceberg")
        spark.sql(f"INSERT INTO local.{namespace}.t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
        rows = [tuple(r) for r in spark.sql(f"SELECT id, name FROM local.{namespace}.t ORDER BY id").collect()]
        if rows != [(1, "a"), (2, "b"), (3, "c")]:
            print(f"spark check: unexpected rows {rows}", file=sys.stderr)
            return 1
        snapshots = spark.sql(f"SELECT count(*) FROM local.{namespace}.t.snapshots").collect()[0][0]
        print(f"spark check: ok (spark {spark.version}, 3 rows, {snapshots} snapshot, namespace {namespace})")
        return 0
    finally:
        spark.sql(f"DROP TABLE IF EXISTS local.{namespace}.t PURGE")
        spark.sql(f"DROP NAMESPACE IF EXISTS local.{namespace}")
        spark.stop()


if __name__ == "__main__":
    sys.exit(main())
