"""A small maintenance-shaped Spark run, the benchmark's workload (bench/spark/jvm-start.sh).

Deliberately not the archive's training run: an unpartitioned table written in six commits,
a MERGE INTO, a bin-pack rewrite, an expiry and a read, on a throw-away Hadoop catalog.
"""

from __future__ import annotations

import sys
import tempfile

from pyspark.sql import SparkSession

with tempfile.TemporaryDirectory(prefix="icepack-bench-") as warehouse:
    spark = (
        SparkSession.builder.appName("icepack-bench-small-job")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
        .config("spark.sql.catalog.b", "org.apache.iceberg.spark.SparkCatalog")
        .config("spark.sql.catalog.b.type", "hadoop")
        .config("spark.sql.catalog.b.warehouse", warehouse)
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    spark.sql("CREATE TABLE b.s.orders (id BIGINT, customer STRING, amount DECIMAL(10,2)) USING iceberg")
    for i in range(6):
        spark.sql(
            f"INSERT INTO b.s.orders SELECT id, concat('c', id % 50), CAST(id AS DECIMAL(10,2)) "
            f"FROM range({i * 300}, {(i + 1) * 300})"
        )
    spark.sql(
        "MERGE INTO b.s.orders t USING (SELECT id, 'vip' AS customer FROM range(0, 1800, 9)) u "
        "ON t.id = u.id WHEN MATCHED THEN UPDATE SET t.customer = u.customer"
    )
    spark.sql("CALL b.system.rewrite_data_files(table => 's.orders', options => map('min-input-files', '2'))")
    spark.sql("CALL b.system.expire_snapshots(table => 's.orders', retain_last => 1)")
    rows = spark.table("b.s.orders").count()
    spark.stop()
sys.exit(0 if rows == 1800 else 1)
