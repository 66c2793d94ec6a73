"""Py4J round trips of the driver paths' one-time lookups, old job against new
(bench/results/task-cost-jvm-home-2026-12-04.md):

    python lookup_cost.py OLD_JOB_DIR NEW_JOB_DIR

OLD: a job with `ExpiryJvm` and `jvm_getters` (main at 5ce15f4); NEW: one with `IcebergJvm`
(session 22). One local Spark session; each lookup counted twice (the same both times), Py4J's
proxy-release messages apart. Prints one JSON object.
"""

from __future__ import annotations

import gc
import importlib.util
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "test", "fixtures"))

from session import find_iceberg_jar  # noqa: E402

RELEASE_COMMAND = "m\nd\n"  # as phases.py: Python no longer holds a proxy of a Java object


def load(job_dir: str, name: str):
    spec = importlib.util.spec_from_file_location(name, os.path.join(job_dir, "icepack_job.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    from pyspark.sql import SparkSession

    old, new = load(sys.argv[1], "old_job"), load(sys.argv[2], "new_job")
    spark = (
        SparkSession.builder.master("local[1]")
        .config("spark.jars", find_iceberg_jar())
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    jvm = spark.sparkContext._jvm
    client = spark.sparkContext._gateway._gateway_client
    calls = [0]
    send = client.send_command

    def counted(command, *args, **kwargs):
        if not command.startswith(RELEASE_COMMAND):
            calls[0] += 1
        return send(command, *args, **kwargs)

    client.send_command = counted

    def count(run) -> int:
        gc.collect()
        before = calls[0]
        run()
        return calls[0] - before

    types = jvm.org.apache.iceberg.types.Types
    schema = jvm.org.apache.iceberg.Schema([types.NestedField.required(1, "id", types.LongType.get())])
    spec = jvm.org.apache.iceberg.PartitionSpec.builderFor(schema).bucket("id", 4).build()
    out: dict[str, int] = {}
    for run in (1, 2):
        made: list = []
        out[f"old: ExpiryJvm (a session's first cleanup) #{run}"] = count(lambda: old.ExpiryJvm(jvm))
        out[f"old: jvm_getters (every merge) #{run}"] = count(lambda: old.jvm_getters(jvm, old._JvmFunctions(jvm), spec))
        out[f"new: IcebergJvm + dangling (a session's first merge) #{run}"] = count(
            lambda: made.append(new.IcebergJvm(jvm)) or made[0].load("dangling")
        )
        out[f"new: + expiry (first cleanup after a merge) #{run}"] = count(lambda: made[0].load("expiry"))
        out[f"new: IcebergJvm + expiry (first cleanup, no merge before) #{run}"] = count(
            lambda: new.IcebergJvm(jvm).load("expiry")
        )
        out[f"new: partition(spec) (every partitioned merge) #{run}"] = count(lambda: made[0].partition(spec))
    print(json.dumps(out, indent=1))
    spark.stop()


if __name__ == "__main__":
    main()
