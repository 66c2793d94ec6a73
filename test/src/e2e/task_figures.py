"""A task's properties, figures and commit totals as the job reads them (JSON transfers of
the session's TaskJvm) against the job's earlier per-value reads, on one real table in one
Spark session (task-figures.int.test.ts asserts on what this prints).

    python task_figures.py --catalog-uri URI --namespace NS

Builds `NS.t`, a format-2 merge-on-read table (three appends, two DELETEs: position-delete
files) with table properties holding a quote, a double quote, a newline, the unit separator,
`=`, `, `, braces and a non-ASCII letter; then runs a merge through the job's `run_in_session`
while a writer appends between the rewrite and the after figures. Prints one JSON line of
facts: each value as the job reads it and as the reference reads it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "fixtures"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "jobs", "spark"))

import icepack_job as job  # noqa: E402
from session import CatalogOptions, build_session, table_sql_name  # noqa: E402

CATALOG = "figures"
ODD_VALUE = "a'b\"c\nd\x1fe=f, g}{ é"


# The reference: how the job read these values before (one Py4J round trip per value).
def reference_figures(table) -> dict:
    snapshot = table.currentSnapshot()
    summary = {} if snapshot is None else dict(snapshot.summary())
    return {
        "snapshotId": None if snapshot is None else str(snapshot.snapshotId()),
        "snapshots": len(table.snapshots()),
        "dataFiles": int(summary.get("total-data-files", 0)),
        "deleteFiles": int(summary.get("total-delete-files", 0)),
        "bytes": int(summary.get("total-files-size", 0)),
        "records": int(summary.get("total-records", 0)),
    }


def reference_commits_since(table, before_snapshot_id):
    out = []
    snapshot = table.currentSnapshot()
    while snapshot is not None and str(snapshot.snapshotId()) != before_snapshot_id:
        out.append([str(snapshot.operation()), dict(snapshot.summary())])
        parent = snapshot.parentId()
        snapshot = None if parent is None else table.snapshot(parent)
    return out


def reference_peak_heap(spark):
    management = spark.sparkContext._jvm.java.lang.management.ManagementFactory
    peak = 0
    for pool in management.getMemoryPoolMXBeans():
        if str(pool.getType().name()) == "HEAP":
            peak += int(pool.getPeakUsage().getUsed())
    return [peak, int(management.getMemoryMXBean().getHeapMemoryUsage().getMax())]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--catalog-uri", required=True)
    parser.add_argument("--namespace", required=True)
    args = parser.parse_args()
    spark = build_session(CatalogOptions(uri=args.catalog_uri, name=CATALOG), "icepack-task-figures")
    ns, ident = args.namespace, {"namespace": [args.namespace], "name": "t"}
    name = table_sql_name(CATALOG, [ns], "t")
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {table_sql_name(CATALOG, [], ns)}")
    spark.sql(
        f"CREATE TABLE {name} (id BIGINT, v STRING) USING iceberg TBLPROPERTIES ("
        "'format-version'='2', 'write.delete.mode'='merge-on-read', 'write.distribution-mode'='none')"
    )
    for c in range(3):
        spark.range(c * 100, c * 100 + 100, numPartitions=2).selectExpr("id", "cast(id AS STRING) AS v").writeTo(name).append()
    for d in range(2):
        spark.sql(f"DELETE FROM {name} WHERE id % 7 = {d}")
    loaded = job.load_table(spark, CATALOG, ident)
    loaded.updateProperties().set("icepack.note", ODD_VALUE).set("icepack.empty", "").commit()

    table = job.load_table(spark, CATALOG, ident)
    tj = job.task_jvm(spark.sparkContext._jvm)
    facts: dict = {
        "properties": {"job": job.table_properties(tj, table), "reference": dict(table.properties())},
        "oddValue": ODD_VALUE,
        "beforeRead": {"job": job.table_figures(tj, table, refresh=False), "reference": reference_figures(table)},
    }

    # A writer's append after the job's rewrite, before its after figures: not the job's commit.
    rewrite = job.run_rewrite

    def rewrite_then_append(*a, **k):
        out = rewrite(*a, **k)
        spark.range(1000, 1010).selectExpr("id", "cast(id AS STRING) AS v").writeTo(name).append()
        return out

    job.run_rewrite = rewrite_then_append
    task = {
        "id": f"merge/{ns}/t",
        "type": "merge",
        "table": {"catalog": CATALOG, **ident},
        "state": {"tableUuid": str(table.uuid())},
        "parameters": {
            "targetFileSizeBytes": 128 * 2**20,
            "minFileSizeBytes": 96 * 2**20,
            "maxFileSizeBytes": 192 * 2**20,
            "minInputFiles": 2,
            "deleteFileThreshold": 1,
            "rewritePositionDeletes": False,
        },
    }
    jargs = argparse.Namespace(catalog_name=CATALOG, max_concurrent_file_group_rewrites=None)
    payload = job.run_in_session(spark, jargs, task, time.monotonic())
    job.run_rewrite = rewrite

    after = job.load_table(spark, CATALOG, ident)
    since = reference_commits_since(after, payload["before"]["snapshotId"])
    facts["result"] = {k: payload[k] for k in ("before", "after", "commits")}
    facts["reference"] = {
        "after": reference_figures(after),
        "commits": job.commit_totals([(op, summary) for op, summary in since]),
        "operations": [op for op, _ in since],
    }
    after_id = payload["after"]["snapshotId"]
    facts["commitsSince"] = {
        "job": [list(c) for c in job.commits_since(tj, after, after_id, payload["before"]["snapshotId"])],
        "reference": since,
    }
    facts["wholeHistory"] = {
        "job": [list(c) for c in job.commits_since(tj, after, after_id, None)],
        "reference": reference_commits_since(after, None),
    }
    facts["peakHeap"] = {
        "referenceBefore": reference_peak_heap(spark),
        "job": list(job.jvm_peak_heap(spark)),
        "referenceAfter": reference_peak_heap(spark),
    }
    spark.stop()
    print(json.dumps(facts))


if __name__ == "__main__":
    main()
