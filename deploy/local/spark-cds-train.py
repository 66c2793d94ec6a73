"""The training run of the local Spark's class-data archive (run by `spark.sh install`).

The JVM records every class this run loads (`-XX:ArchiveClassesAtExit`); later local Spark
JVMs map them from the archive instead of loading and verifying them again. So the run does
what Icepack's job and the test fixtures do, on a throw-away Hadoop catalog: create a
partitioned table, write it in small commits, delete rows (merge-on-read), rewrite data and
position-delete files, sort, expire snapshots, read it back.
"""

from __future__ import annotations

import sys
import tempfile

from pyspark.sql import SparkSession


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="icepack-cds-") as warehouse:
        spark = (
            SparkSession.builder.appName("icepack-cds-training")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.sql.session.timeZone", "UTC")
            .config(
                "spark.sql.extensions",
                "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
            )
            .config("spark.sql.catalog.train", "org.apache.iceberg.spark.SparkCatalog")
            .config("spark.sql.catalog.train.type", "hadoop")
            .config("spark.sql.catalog.train.warehouse", warehouse)
            .getOrCreate()
        )
        spark.sparkContext.setLogLevel("ERROR")
        table = "train.db.events"
        spark.sql(
            f"CREATE TABLE {table} (id BIGINT, kind STRING, score DOUBLE, ts TIMESTAMP) "
            "USING iceberg PARTITIONED BY (kind) "
            "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')"
        )
        for i in range(4):
            spark.sql(
                f"INSERT INTO {table} SELECT id, CAST(id % 3 AS STRING), rand(), "
                f"timestamp_seconds(id) FROM range({i * 500}, {(i + 1) * 500})"
            )
        spark.sql(f"DELETE FROM {table} WHERE id % 7 = 0")
        spark.sql(f"CALL train.system.rewrite_data_files(table => 'db.events', options => map('min-input-files', '2'))")
        spark.sql(f"CALL train.system.rewrite_position_delete_files(table => 'db.events')")
        spark.sql(
            "CALL train.system.rewrite_data_files(table => 'db.events', strategy => 'sort', "
            "sort_order => 'ts ASC NULLS FIRST', options => map('rewrite-all', 'true'))"
        )
        spark.sql("CALL train.system.expire_snapshots(table => 'db.events', retain_last => 1)")
        rows = spark.table(table).count()
        spark.stop()
    expected = 2000 - len([i for i in range(2000) if i % 7 == 0])
    if rows != expected:
        print(f"training run read {rows} rows, expected {expected}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
