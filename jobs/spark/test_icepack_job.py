"""Unit tests of the job's pure parts (no Spark): python3 -m unittest discover jobs/spark"""

from __future__ import annotations

import io
import json
import os
import sys
import tempfile
import socket
import unittest
from contextlib import redirect_stderr, redirect_stdout
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import icepack_job as job  # noqa: E402

MERGE = {
    "id": "merge/prod/sales/orders",
    "type": "merge",
    "table": {"catalog": "prod", "namespace": ["sales"], "name": "odd.name with 'quote' and `tick`"},
    "state": {"tableUuid": "6f9f3b4e-2d7c-4d7e-9b1a-0c8e5f1a2b3c"},
    "parameters": {
        "targetFileSizeBytes": 512,
        "minFileSizeBytes": 384,
        "maxFileSizeBytes": 921,
        "minInputFiles": 5,
        "deleteFileThreshold": 10,
        "rewritePositionDeletes": True,
        "partialProgress": {"enabled": True, "maxCommits": 4},
        "partitionFilter": [{"column": "country", "value": "d'e"}],
    },
}


class LedgerFiguresTest(unittest.TestCase):
    def test_sums_only_the_runs_own_replace_commits(self):
        rewrite = {
            "deleted-data-files": "12",
            "added-data-files": "2",
            "removed-delete-files": "3",
            "added-delete-files": "0",
            "removed-files-size": "9000",
            "added-files-size": "8500",
        }
        writer = {"added-data-files": "4", "added-files-size": "400", "deleted-data-files": "1"}
        totals = job.commit_totals([("append", writer), ("replace", rewrite), ("overwrite", writer)])
        self.assertEqual(
            totals,
            {
                "bytesRead": 9000,
                "bytesWritten": 8500,
                "filesRewritten": 15,
                "dataFilesRemoved": 10,
                "deleteFilesRemoved": 3,
            },
        )
        self.assertEqual(job.commit_totals([])["bytesRead"], 0)

    def test_reads_cpu_ticks_after_a_command_name_with_spaces_and_parentheses(self):
        line = "4242 (java (x) y) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 3 4 20 0 30 0 999 0 0"
        self.assertEqual(job.stat_cpu_ticks(line), 300)

    def test_cpu_of_this_process_is_read_from_proc_on_linux(self):
        seconds = job.process_cpu_seconds([os.getpid()])
        if sys.platform.startswith("linux"):
            self.assertIsNotNone(seconds)
            self.assertGreaterEqual(seconds, 0)
        self.assertIsNone(job.process_cpu_seconds([2**22 + 7]))

    def test_executor_cpu_is_the_stages_cpu_and_deserialize_time(self):
        stages = [
            {"stageId": 0, "executorCpuTime": 1_500_000_000, "executorDeserializeCpuTime": 250_000_000},
            {"stageId": 1, "executorCpuTime": 2_000_000_000},
            {"stageId": 2, "executorCpuTime": -1, "executorDeserializeCpuTime": "x"},
        ]
        self.assertAlmostEqual(job.executor_cpu_seconds(stages), 3.75)
        self.assertEqual(job.executor_cpu_seconds([]), 0)

    def test_executors_are_threads_of_the_driver_only_in_local_mode(self):
        for master in ("local", "local[2]", "local[*]", "local[4, 2]"):
            self.assertTrue(job.executors_in_driver(master), master)
        for master in ("local-cluster[1,1,1024]", "k8s://https://10.0.0.1:443", "yarn", "spark://h:7077"):
            self.assertFalse(job.executors_in_driver(master), master)

    def test_peak_heap_is_the_largest_executors_and_leaves_the_driver_out(self):
        executors = [
            {"id": "driver", "peakMemoryMetrics": {"JVMHeapMemory": 9 * 2**30}},
            {"id": "1", "peakMemoryMetrics": {"JVMHeapMemory": 700 * 2**20, "JVMOffHeapMemory": 10}},
            {"id": "2", "peakMemoryMetrics": {"JVMHeapMemory": 900 * 2**20}},
            {"id": "3"},
            {"id": "4", "peakMemoryMetrics": {"JVMHeapMemory": "x"}},
        ]
        self.assertEqual(job.executors_peak_heap(executors), 900 * 2**20)
        self.assertIsNone(job.executors_peak_heap([{"id": "driver", "peakMemoryMetrics": {"JVMHeapMemory": 5}}]))
        self.assertIsNone(job.executors_peak_heap([{"id": "1", "peakMemoryMetrics": {"JVMHeapMemory": 0}}]))

    def test_stage_peak_heap_is_the_largest_task_end_peak(self):
        stages = [
            {"stageId": 0, "peakExecutorMetrics": {"JVMHeapMemory": 70 * 2**20}},
            {"stageId": 1},
            {"stageId": 2, "peakExecutorMetrics": {"JVMHeapMemory": 80 * 2**20}},
            {"stageId": 3, "peakExecutorMetrics": {"JVMHeapMemory": 0}},
            {"stageId": 4, "peakExecutorMetrics": "x"},
        ]
        self.assertEqual(job.stages_peak_heap(stages), 80 * 2**20)
        self.assertIsNone(job.stages_peak_heap([{"stageId": 1}, {"stageId": 3, "peakExecutorMetrics": {}}]))

    def test_reads_spark_memory_settings(self):
        self.assertEqual(job.spark_memory_bytes("4g"), 4 * 2**30)
        self.assertEqual(job.spark_memory_bytes("512m"), 512 * 2**20)
        self.assertEqual(job.spark_memory_bytes("2G"), 2 * 2**30)
        self.assertEqual(job.spark_memory_bytes("1024"), 1024 * 2**20)
        self.assertEqual(job.spark_memory_bytes("64kb"), 64 * 2**10)
        self.assertIsNone(job.spark_memory_bytes("lots"))

    def test_stages_are_settled_when_none_runs_or_waits(self):
        self.assertTrue(job.stages_settled([]))
        self.assertTrue(job.stages_settled([{"status": "COMPLETE", "numActiveTasks": 0}, {"status": "SKIPPED"}]))
        self.assertFalse(job.stages_settled([{"status": "COMPLETE"}, {"status": "ACTIVE"}]))
        self.assertFalse(job.stages_settled([{"status": "PENDING"}]))
        self.assertFalse(job.stages_settled([{"status": "COMPLETE", "numActiveTasks": 1}]))

    def test_reads_the_stages_from_the_drivers_monitoring_api_within_a_size_limit(self):
        import http.server
        import threading

        bodies = {
            "/api/v1/applications/app-1/stages": json.dumps([{"executorCpuTime": 10**9}]).encode(),
            "/api/v1/applications/app-big/stages": b"[" + b" " * job.MONITORING_RESPONSE_LIMIT + b"]",
            "/api/v1/applications/app-odd/stages": b'{"stages": []}',
        }

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = bodies.get(self.path)
                self.send_response(200 if body is not None else 404)
                self.end_headers()
                self.wfile.write(body or b"")

            def log_message(self, *args):
                pass

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            url = f"http://127.0.0.1:{server.server_address[1]}/"
            self.assertEqual(job.executor_cpu_seconds(job.stages_of(url, "app-1")), 1.0)
            with self.assertRaisesRegex(ValueError, "size limit"):
                job.stages_of(url, "app-big")
            with self.assertRaisesRegex(ValueError, "not a list"):
                job.stages_of(url, "app-odd")
            with self.assertRaises(OSError):
                job.stages_of(url, "app-missing")
        finally:
            server.shutdown()
            server.server_close()


class ParseTaskTest(unittest.TestCase):
    def test_accepts_a_merge_task_with_any_table_name(self):
        self.assertEqual(job.parse_task(MERGE)["table"]["name"], "odd.name with 'quote' and `tick`")

    def test_names_the_missing_field(self):
        task = json.loads(json.dumps(MERGE))
        del task["parameters"]["minInputFiles"]
        with self.assertRaisesRegex(job.BadInput, r"task.parameters.minInputFiles is required"):
            job.parse_task(task)

    def test_rejects_a_boolean_where_a_number_is_meant(self):
        task = json.loads(json.dumps(MERGE))
        task["parameters"]["targetFileSizeBytes"] = True
        with self.assertRaisesRegex(job.BadInput, "targetFileSizeBytes has the wrong type"):
            job.parse_task(task)

    def test_cleanup_needs_a_zoned_instant(self):
        task = {
            "id": "cleanup/x",
            "type": "cleanup",
            "table": MERGE["table"],
            "state": MERGE["state"],
            "parameters": {"olderThan": "2026-01-01T00:00:00", "retainLast": 1},
        }
        with self.assertRaisesRegex(job.BadInput, "time zone"):
            job.parse_task(task)
        task["parameters"]["olderThan"] = "2026-01-01T00:00:00Z"
        self.assertIs(job.parse_task(task), task)
        self.assertEqual(job.parse_instant_ms("2026-01-01T00:00:00Z", "x"), 1767225600000)

    def test_reads_every_instant_the_planner_may_send_on_any_python(self):
        # `Z` and odd fraction lengths are what datetime.fromisoformat rejects before 3.11.
        for text, millis in (
            ("2026-01-01T00:00:00Z", 1767225600000),
            ("2026-01-01T00:00:00.000Z", 1767225600000),
            ("2026-01-01T00:00:00.5Z", 1767225600500),
            ("2026-01-01T00:00:00.123456789Z", 1767225600123),
            ("2026-01-01T01:30:00+01:30", 1767225600000),
            ("2025-12-31T23:00:00-01:00", 1767225600000),
        ):
            with self.subTest(text=text):
                self.assertEqual(job.parse_instant_ms(text, "x"), millis)
        for text, message in (
            ("2026-01-01T00:00:00", "time zone"),
            ("2026-13-01T00:00:00Z", "not a valid date-time"),
            ("2026-01-01 00:00:00Z", "not an ISO-8601 date-time"),
            ("2026-01-01T00:00Z", "not an ISO-8601 date-time"),
            ("yesterday", "not an ISO-8601 date-time"),
        ):
            with self.subTest(text=text), self.assertRaisesRegex(job.BadInput, f"^x .*{message}"):
                job.parse_instant_ms(text, "x")

    def test_sort_checks_strategy_and_columns(self):
        task = json.loads(json.dumps(MERGE))
        task["type"] = "sort"
        task["parameters"]["strategy"] = "peano"
        task["parameters"]["columns"] = [{"name": "id"}]
        with self.assertRaisesRegex(job.BadInput, "strategy must be sort, zorder or hilbert"):
            job.parse_task(task)

    def test_hilbert_takes_exactly_two_columns(self):
        task = json.loads(json.dumps(MERGE))
        task["type"] = "sort"
        task["parameters"]["strategy"] = "hilbert"
        task["parameters"]["columns"] = [{"name": "x"}, {"name": "y"}]
        self.assertIs(job.parse_task(task), task)
        for columns in ([{"name": "x"}], [{"name": "x"}, {"name": "y"}, {"name": "z"}]):
            task["parameters"]["columns"] = columns
            with self.subTest(columns=columns), self.assertRaisesRegex(
                job.BadInput, r"^task\.parameters\.columns must name exactly 2 columns for hilbert$"
            ):
                job.parse_task(task)


class HilbertTest(unittest.TestCase):
    """The pure parts of the Hilbert layout; the Spark run (and that Spark's SQL gives
    hilbert_index's numbers) is in services/planner/src/partition-rewrite.int.test.ts."""

    def test_index_walks_every_cell_once_in_unit_steps(self):
        # The curve's defining properties on an 8 × 8 grid: a bijection onto 0 … 63, and cells
        # next in the index are neighbours on the grid.
        bits = 3
        side = 1 << bits
        order = sorted(((job.hilbert_index(x, y, bits), (x, y)) for x in range(side) for y in range(side)))
        self.assertEqual([d for d, _ in order], list(range(side * side)))
        for (_, (x0, y0)), (_, (x1, y1)) in zip(order, order[1:]):
            self.assertEqual(abs(x0 - x1) + abs(y0 - y1), 1, ((x0, y0), (x1, y1)))
        self.assertEqual(order[0][1], (0, 0))
        self.assertEqual(order[-1][1], (side - 1, 0))

    def test_index_keeps_the_sixteen_bit_corners(self):
        last = (1 << job.HILBERT_BITS) - 1
        self.assertEqual(job.hilbert_index(0, 0), 0)
        self.assertEqual(job.hilbert_index(last, 0), (1 << 32) - 1)
        self.assertLess(job.hilbert_index(last, last), 1 << 32)

    def test_index_sql_folds_the_bits_from_the_highest(self):
        sql = job.hilbert_index_sql("cx", "cy", bits=4)
        self.assertTrue(sql.startswith("aggregate(sequence(3, 0, -1), named_struct('x', CAST(cx AS BIGINT)"))
        self.assertIn("15 - acc.y", sql)
        self.assertTrue(sql.endswith("acc -> acc.d)"))
        self.assertEqual(sql.count("("), sql.count(")"))

    def test_columns_resolve_by_name_then_ignoring_case_and_need_an_order_onto_numbers(self):
        columns = ["id", "x", "When", "v", "d"]
        types = {"id": "LONG", "x": "INTEGER", "When": "TIMESTAMP", "v": "STRING", "d": "DATE"}
        self.assertEqual(job.hilbert_columns(columns, types, ["x", "when"]), [(1, "INTEGER"), (2, "TIMESTAMP")])
        self.assertEqual(job.hilbert_columns(columns, types, ["d", "id"]), [(4, "DATE"), (0, "LONG")])
        for wanted, message in (
            (["x", "nope"], r"^task\.parameters\.columns\[1\]\.name 'nope' is not a top-level column"),
            (["a.b", "x"], r"^task\.parameters\.columns\[0\]\.name 'a\.b' is not a top-level column"),
            (["x", "v"], r"^task\.parameters\.columns\[1\]\.name 'v' is of type string"),
            (["x", "X"], r"^task\.parameters\.columns names one column twice"),
        ):
            with self.subTest(wanted=wanted), self.assertRaisesRegex(job.BadInput, message):
                job.hilbert_columns(columns, types, wanted)
        # Two columns that differ only in case: the name must be exact.
        with self.assertRaisesRegex(job.BadInput, "'ab' is not a top-level column"):
            job.hilbert_columns(["Ab", "aB", "c"], {"Ab": "LONG", "aB": "LONG", "c": "LONG"}, ["ab", "c"])

    def test_values_order_as_their_column(self):
        self.assertEqual(job.hilbert_value_sql("c0", "LONG"), "CAST(c0 AS DOUBLE)")
        self.assertEqual(job.hilbert_value_sql("c0", "DATE"), "CAST(unix_date(c0) AS DOUBLE)")
        self.assertEqual(
            job.hilbert_value_sql("c0", "TIMESTAMP"), "CAST(unix_micros(CAST(c0 AS TIMESTAMP)) AS DOUBLE)"
        )
        lo, hi = job.hilbert_bounds_sql("v")
        self.assertTrue(lo.startswith("min(CASE WHEN v BETWEEN -1.7976931348623157E308D"))
        self.assertTrue(hi.startswith("max("))

    def test_scale_maps_the_bounds_onto_the_cells(self):
        sql = job.hilbert_scale_sql("v", -2.5, 7.5)
        self.assertIn("WHEN v IS NULL THEN CAST(0 AS BIGINT)", sql)
        self.assertIn("(v - (-2.50000000000000000E+00D)) * (6.55350000000000000E+03D)", sql)
        self.assertIn("least(65535.0D, greatest(0.0D, ", sql)
        # One value, no value, or bounds that are not finite: one cell for every row.
        for lo, hi in ((3.0, 3.0), (None, None), (float("-inf"), 1.0), (5.0, 1.0), (-1e308, 1e308)):
            with self.subTest(lo=lo, hi=hi):
                self.assertEqual(job.hilbert_scale_sql("v", lo, hi), "CAST(0 AS BIGINT)")


UUID = MERGE["state"]["tableUuid"]
NOW_MS = job.parse_instant_ms("2026-12-01T12:00:00Z", "now")
DAY_MS = 24 * 60 * 60 * 1000


def cleanup_task(older_than: str = "2026-12-01T12:00:00Z", retain_last: int = 1) -> dict:
    """A cleanup as a forged TableState would make it: `max-snapshot-age-ms=0` → olderThan = now."""
    return {
        "id": "cleanup/prod/sales/orders",
        "type": "cleanup",
        "table": {"catalog": "prod", "namespace": ["sales"], "name": "orders"},
        "state": {"tableUuid": UUID},
        "parameters": {"olderThan": older_than, "retainLast": retain_last},
    }


class _FakeExpressions:
    """Iceberg's `Expressions` as tuples: enough to compare the filters two task forms build."""

    def __getattr__(self, name):
        if name in ("and", "or"):
            return lambda a, b: (name, a, b)
        if name == "equal":
            return lambda term, value: ("equal", term, value)
        if name == "isNull":
            return lambda term: ("isNull", term)
        return lambda *args: (name, *args)


class _FakeJvm:
    def __init__(self):
        expressions = _FakeExpressions()
        self.org = type("org", (), {"apache": type("apache", (), {"iceberg": type("iceberg", (), {
            "expressions": type("expressions", (), {"Expressions": expressions}),
        })})})


class PartitionsTest(unittest.TestCase):
    """The planner's partition-scoped tasks: `partitions` (any of) with transform predicates."""

    def task(self, partitions):
        return {**MERGE, "parameters": {**MERGE["parameters"], "partitions": partitions}}

    def test_accepts_partitions_with_transforms(self):
        partitions = [
            [{"column": "region", "value": "eu"}, {"column": "ts", "transform": "day", "value": "2026-01-02"}],
            [{"column": "id", "transform": "bucket[16]", "value": "3"}],
            [{"column": "ts", "transform": "hour", "value": "493000"}, {"column": "name", "transform": "truncate[4]", "value": None}],
        ]
        self.assertEqual(job.parse_task(self.task(partitions))["parameters"]["partitions"], partitions)

    def test_refuses_bad_partitions_naming_the_field(self):
        cases = [
            ([], "task.parameters.partitions must be a non-empty list"),
            ([[]], "task.parameters.partitions[0] must be a non-empty list of predicates"),
            ([[{"column": "ts", "transform": "days", "value": "1"}]], "task.parameters.partitions[0][0].transform"),
            ([[{"column": "ts", "transform": "bucket[0]", "value": "1"}]], "task.parameters.partitions[0][0].transform"),
            ([[{"column": "", "value": "1"}]], "task.parameters.partitions[0][0].column"),
            ([[{"column": "a", "value": [1]}]], "task.parameters.partitions[0][0].value"),
        ]
        for partitions, message in cases:
            with self.subTest(partitions=partitions):
                with self.assertRaises(job.BadInput) as caught:
                    job.parse_task(self.task(partitions))
                self.assertIn(message, str(caught.exception))

    def test_partition_sets_name_the_same_partitions_as_partitions(self):
        """The planner's compact form: the same rewrite filter as the list it stands for."""
        partitions = [
            [{"column": "region", "value": "eu"}, {"column": "ts", "transform": "day", "value": "2026-01-02"}],
            [{"column": "region", "value": None}, {"column": "ts", "transform": "day", "value": "2026-01-01"}],
            [{"column": "id", "transform": "bucket[16]", "value": "3"}],
        ]
        sets = [
            {
                "fields": [{"column": "region"}, {"column": "ts", "transform": "day"}],
                "values": [["eu", "2026-01-02"], [None, "2026-01-01"]],
            },
            {"fields": [{"column": "id", "transform": "bucket[16]"}], "values": [["3"]]},
        ]
        compact = {**MERGE["parameters"], "partitionSets": sets}
        job.parse_task({**MERGE, "parameters": compact})
        self.assertEqual([p for _, p in job.partition_sets(compact)], partitions)
        self.assertEqual(
            job.rewrite_filter(_FakeJvm(), None, {"partitionSets": sets}),
            job.rewrite_filter(_FakeJvm(), None, {"partitions": partitions}),
        )
        # Both forms together: any partition of either, the filter ANDed as before.
        both = {"partitionFilter": [{"column": "region", "value": "eu"}], "partitions": partitions[:1], "partitionSets": sets[1:]}
        self.assertEqual(
            job.rewrite_filter(_FakeJvm(), None, both),
            ("and", ("equal", ("ref", "region"), "eu"), ("or", job.rewrite_filter(_FakeJvm(), None, {"partitions": partitions[:1]}), ("equal", ("bucket", "id", 16), "3"))),
        )

    def test_refuses_bad_partition_sets_naming_the_field(self):
        row = [["eu"]]
        cases = [
            ([], "task.parameters.partitionSets must be a non-empty list"),
            ([{"fields": [], "values": row}], "task.parameters.partitionSets[0].fields must not be empty"),
            ([{"fields": [{"column": "a"}], "values": []}], "task.parameters.partitionSets[0].values must not be empty"),
            ([{"fields": [{"column": "ts", "transform": "days"}], "values": row}], "task.parameters.partitionSets[0].fields[0].transform"),
            ([{"fields": [{"column": ""}], "values": row}], "task.parameters.partitionSets[0].fields[0].column"),
            ([{"fields": [{"column": "a"}, {"column": "b"}], "values": row}], "task.parameters.partitionSets[0].values[0] must list 2 values"),
            ([{"fields": [{"column": "a"}], "values": [[[1]]]}], "task.parameters.partitionSets[0].values[0][0] must be a string"),
        ]
        for sets, message in cases:
            with self.subTest(sets=sets):
                with self.assertRaises(job.BadInput) as caught:
                    job.parse_task({**MERGE, "parameters": {**MERGE["parameters"], "partitionSets": sets}})
                self.assertIn(message, str(caught.exception))

    def test_converts_rendered_values_to_the_term_type(self):
        w = "task.parameters.partitions[0][0]"
        self.assertEqual(job.predicate_value("day", "TIMESTAMP", "2026-01-02", w), "2026-01-02")
        self.assertEqual(job.predicate_value("hour", "TIMESTAMP", "493000", w), 493000)
        self.assertEqual(job.predicate_value("bucket[16]", "STRING", "7", w), 7)
        self.assertEqual(job.predicate_value("month", "DATE", "672", w), 672)
        self.assertEqual(job.predicate_value("identity", "LONG", "12", w), 12)
        self.assertEqual(job.predicate_value("identity", "BOOLEAN", "true", w), True)
        self.assertEqual(job.predicate_value("identity", "DOUBLE", "1.5", w), 1.5)
        self.assertEqual(job.predicate_value("identity", "STRING", "d'e", w), "d'e")
        self.assertEqual(job.predicate_value("truncate[4]", "STRING", "abcd", w), "abcd")
        self.assertEqual(job.predicate_value("truncate[10]", "INTEGER", "120", w), 120)
        self.assertEqual(job.predicate_value("identity", "DATE", "2026-01-02", w), "2026-01-02")
        self.assertIsNone(job.predicate_value("identity", "INTEGER", None, w))

    def test_refuses_values_that_do_not_fit_the_type(self):
        w = "task.parameters.partitions[0][0]"
        with self.assertRaises(job.BadInput) as caught:
            job.predicate_value("identity", "INTEGER", "eu", w)
        self.assertIn("task.parameters.partitions[0][0].value 'eu' is not of type integer", str(caught.exception))
        with self.assertRaises(job.BadInput):
            job.predicate_value("identity", "BOOLEAN", "yes", w)
        with self.assertRaises(job.BadInput) as caught:
            job.predicate_value("identity", "BINARY", "00ff", w)
        self.assertIn("cannot be filtered", str(caught.exception))


class GuardTableTest(unittest.TestCase):
    """Issue 16, findings 2 and 3: the job trusts the table, not the task."""

    def test_the_task_needs_the_table_uuid(self):
        task = json.loads(json.dumps(MERGE))
        del task["state"]
        with self.assertRaisesRegex(job.BadInput, r"task.state is required"):
            job.parse_task(task)
        task["state"] = {"tableUuid": ""}
        with self.assertRaisesRegex(job.BadInput, r"task.state.tableUuid must not be empty"):
            job.parse_task(task)

    def test_refuses_a_table_dropped_and_recreated_under_the_same_name(self):
        with self.assertRaisesRegex(job.Refused, r"sales.orders is not the table the task was planned for"):
            job.guard_table(cleanup_task(), "0b7c1d2e-aaaa-4bbb-8ccc-123456789abc", False, {}, NOW_MS)
        self.assertEqual(job.ERROR_KINDS["refused"], (6, False))

    def test_refuses_a_name_that_resolved_to_a_metadata_table(self):
        with self.assertRaisesRegex(job.Refused, "metadata table"):
            job.guard_table(MERGE, UUID, True, {}, NOW_MS)

    def test_honours_the_tables_own_pause_and_type_switches(self):
        with self.assertRaisesRegex(job.Refused, r"icepack.enabled=false"):
            job.guard_table(MERGE, UUID, False, {"icepack.enabled": " FALSE "}, NOW_MS)
        with self.assertRaisesRegex(job.Refused, r"switches merge off \(icepack.merge.enabled=false\)"):
            job.guard_table(MERGE, UUID, False, {"icepack.merge.enabled": "false"}, NOW_MS)
        with self.assertRaisesRegex(job.Refused, r"switches cleanup off"):
            job.guard_table(cleanup_task(), UUID, False, {"icepack.cleanup.enabled": "false"}, NOW_MS)
        # Another type's switch, or an unreadable value (the planner's default applies), is no bar.
        self.assertEqual(job.guard_table(MERGE, UUID, False, {"icepack.sort.enabled": "false"}, NOW_MS), {})
        self.assertEqual(job.guard_table(MERGE, UUID, False, {"icepack.enabled": "flase"}, NOW_MS), {})

    def test_gc_disabled_refuses_a_cleanup_as_iceberg_reads_it(self):
        for value in ("false", "no", "0", ""):
            with self.assertRaisesRegex(job.Refused, "gc.enabled=false"):
                job.guard_table(cleanup_task(), UUID, False, {"gc.enabled": value}, NOW_MS)
        self.assertEqual(job.guard_table(MERGE, UUID, False, {"gc.enabled": "false"}, NOW_MS), {})

    def test_a_forged_zero_retention_expires_no_more_than_the_tables_properties_allow(self):
        allowed = job.guard_table(
            cleanup_task(retain_last=1),
            UUID,
            False,
            {"history.expire.max-snapshot-age-ms": str(3 * DAY_MS), "history.expire.min-snapshots-to-keep": "4"},
            NOW_MS,
        )
        self.assertEqual(allowed, {"olderThanMs": NOW_MS - 3 * DAY_MS, "retainLast": 4})

    def test_without_properties_iceberg_defaults_bound_the_task(self):
        allowed = job.guard_table(cleanup_task(), UUID, False, {}, NOW_MS)
        self.assertEqual(allowed, {"olderThanMs": NOW_MS - 5 * DAY_MS, "retainLast": 1})

    def test_the_icepack_key_wins_over_icebergs_and_bad_values_fall_through(self):
        props = {
            "history.expire.max-snapshot-age-ms": str(10 * DAY_MS),
            "icepack.history.expire.max-snapshot-age-ms": str(DAY_MS),
            "history.expire.min-snapshots-to-keep": "3",
            "icepack.history.expire.min-snapshots-to-keep": "0",  # below 1: ignored, as the planner does
        }
        allowed = job.guard_table(cleanup_task(), UUID, False, props, NOW_MS)
        self.assertEqual(allowed, {"olderThanMs": NOW_MS - DAY_MS, "retainLast": 3})

    def test_a_task_more_conservative_than_the_table_is_kept(self):
        allowed = job.guard_table(cleanup_task("2026-11-01T00:00:00Z", 9), UUID, False, {}, NOW_MS)
        self.assertEqual(
            allowed, {"olderThanMs": job.parse_instant_ms("2026-11-01T00:00:00Z", "x"), "retainLast": 9}
        )
        self.assertEqual(job.format_instant_ms(allowed["olderThanMs"]), "2026-11-01T00:00:00.000Z")

    def test_an_enormous_table_retention_keeps_everything(self):
        allowed = job.guard_table(
            cleanup_task(), UUID, False, {"history.expire.max-snapshot-age-ms": "9" * 30}, NOW_MS
        )
        self.assertEqual(allowed["olderThanMs"], 0)


class OptionsTest(unittest.TestCase):
    def test_maps_the_task_to_iceberg_option_names(self):
        self.assertEqual(
            job.rewrite_options(MERGE["parameters"], 3),
            {
                "target-file-size-bytes": "512",
                "min-file-size-bytes": "384",
                "max-file-size-bytes": "921",
                "min-input-files": "5",
                "delete-file-threshold": "10",
                "partial-progress.enabled": "true",
                "partial-progress.max-commits": "4",
                "max-concurrent-file-group-rewrites": "3",
            },
        )


class ClassifyTest(unittest.TestCase):
    def test_kinds(self):
        cases = [
            ([("org.apache.iceberg.exceptions.NoSuchTableException", "Table does not exist")], "table-not-found"),
            ([("org.apache.spark.SparkException", "x"), ("org.apache.iceberg.exceptions.CommitFailedException", "")], "commit-conflict"),
            ([("org.apache.iceberg.exceptions.ValidationException", "Found conflicting files that can contain records")], "commit-conflict"),
            ([("org.apache.iceberg.exceptions.ValidationException", "Cannot find field 'nope' in struct")], "bad-input"),
            ([("java.lang.RuntimeException", "x"), ("java.net.ConnectException", "refused")], "io"),
            ([("org.apache.iceberg.exceptions.ServiceFailureException", "Server error")], "io"),
            ([("java.lang.IllegalStateException", "boom")], "failed"),
            # apache/iceberg#15001: a commit to another branch took the sequence number.
            (
                [
                    (
                        "org.apache.iceberg.exceptions.BadRequestException",
                        "Malformed request: Cannot add snapshot with sequence number 66 older "
                        "than last sequence number 66",
                    )
                ],
                "commit-conflict",
            ),
            ([("org.apache.iceberg.exceptions.BadRequestException", "Malformed request: x")], "failed"),
            ([("java.lang.OutOfMemoryError", "Java heap space")], "out-of-memory"),
            (
                [
                    (
                        "org.apache.spark.SparkException",
                        "Job aborted due to stage failure: Task 0 in stage 3.0 failed: "
                        "java.lang.OutOfMemoryError: Java heap space",
                    )
                ],
                "out-of-memory",
            ),
        ]
        for chain, kind in cases:
            self.assertEqual(job.classify(chain), kind, chain)


class _JavaThrowable:
    """Stands for a py4j JavaObject of a Java exception: getClass().getName(), getMessage(), getCause()."""

    def __init__(self, name: str, message: str, cause: "_JavaThrowable | None" = None):
        self._name, self._message, self._cause = name, message, cause

    def getClass(self):  # noqa: N802 — the Java method's name
        return type("JavaClass", (), {"getName": lambda _self: self._name})()

    def getMessage(self):  # noqa: N802
        return self._message

    def getCause(self):  # noqa: N802
        return self._cause


class JavaChainTest(unittest.TestCase):
    def test_reads_a_raw_py4j_error(self):
        error = Exception("py4j")
        error.java_exception = _JavaThrowable(
            "org.apache.spark.SparkException", "job aborted", _JavaThrowable("java.net.ConnectException", "refused")
        )
        self.assertEqual(
            job.java_chain(error),
            [("org.apache.spark.SparkException", "job aborted"), ("java.net.ConnectException", "refused")],
        )

    def test_reads_the_origin_of_an_exception_pyspark_converted(self):
        # PySpark 4 turns Spark's NoSuchTableException into its own AnalysisException, keeping
        # the Java throwable as _origin: a missing table must still classify as table-not-found.
        error = Exception("[TABLE_OR_VIEW_NOT_FOUND] The table cannot be found")
        error._origin = _JavaThrowable(
            "org.apache.spark.sql.catalyst.analysis.NoSuchTableException", "The table cannot be found"
        )
        self.assertEqual(job.classify(job.java_chain(error)), "table-not-found")

    def test_a_python_error_has_no_chain(self):
        self.assertEqual(job.java_chain(ValueError("x")), [])


class MainTest(unittest.TestCase):
    def test_bad_input_prints_one_result_line_and_exits_2(self):
        out = io.StringIO()
        with tempfile.TemporaryDirectory() as tmp, redirect_stdout(out):
            result_file = os.path.join(tmp, "result.json")
            code = job.main(["--task-json", "{not json", "--result-file", result_file])
            with open(result_file, encoding="utf-8") as fh:
                written = json.loads(fh.read())
        lines = out.getvalue().splitlines()
        self.assertEqual(code, 2)
        self.assertEqual(len(lines), 1)
        self.assertEqual(json.loads(lines[0]), written)
        self.assertEqual(written["error"]["kind"], "bad-input")
        self.assertFalse(written["error"]["retryable"])

    def test_the_result_line_is_also_the_termination_message(self):
        out, err = io.StringIO(), io.StringIO()
        with tempfile.TemporaryDirectory() as tmp, redirect_stdout(out), redirect_stderr(err):
            log = os.path.join(tmp, "termination-log")
            code = job.main(["--task-json", "{not json", "--termination-log", log])
            with open(log, encoding="utf-8") as fh:
                message = fh.read()
            # Over Kubernetes' limit: not written (a truncated line would not parse).
            big = os.path.join(tmp, "big")
            job.write_termination_log("x" * (job.TERMINATION_MESSAGE_LIMIT + 1), big)
            self.assertFalse(os.path.exists(big))
            # An unwritable path does not fail the job.
            job.write_termination_log("{}", os.path.join(tmp, "missing-dir", "log"))
        self.assertEqual(code, 2)
        self.assertEqual(json.loads(message), json.loads(out.getvalue().splitlines()[0]))
        self.assertIn("not in the termination message", err.getvalue())
        self.assertIn("cannot write the termination message", err.getvalue())

    def test_secret_from_file_is_read_not_echoed(self):
        with tempfile.NamedTemporaryFile("w", delete=False) as fh:
            fh.write("s3cr3t\n")
        try:
            self.assertEqual(job.read_secret({"ICEPACK_CATALOG_TOKEN_FILE": fh.name}, "ICEPACK_CATALOG_TOKEN"), "s3cr3t")
        finally:
            os.unlink(fh.name)


def closed_port() -> int:
    """A local port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class TracingTest(unittest.TestCase):
    """The span itself is checked against a real OTLP receiver in test/src/e2e/job-span.int.test.ts."""

    def test_no_endpoint_means_no_span(self):
        self.assertFalse(job.start_job_span({"TRACEPARENT": "00-" + "1" * 32 + "-" + "2" * 16 + "-01"}).recording)

    def test_the_sdk_switches_are_honoured(self):
        endpoint = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}
        self.assertTrue(job.tracing_wanted(endpoint))
        self.assertTrue(job.tracing_wanted({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}))
        self.assertFalse(job.tracing_wanted({**endpoint, "OTEL_SDK_DISABLED": "true"}))
        self.assertFalse(job.tracing_wanted({**endpoint, "OTEL_TRACES_EXPORTER": "none"}))

    def test_a_broken_span_never_raises(self):
        span = job.JobSpan(provider=object(), span=object())
        with redirect_stderr(io.StringIO()) as err:
            span.describe(MERGE)
            span.describe_batch([MERGE])
            span.finish({"ok": True, "exitCode": 0})
            span.finish({"ok": True, "exitCode": 0, "tasks": {"a": {"exitCode": 2}}})
        self.assertIn("no span for this run", err.getvalue())

    def test_a_batch_span_names_what_it_can_of_a_bad_task_list(self):
        # A list whose tasks lack ids (the batch is bad input) still counts; not a list: nothing.
        attributes: dict[str, object] = {}
        span = job.JobSpan(provider=object(), span=mock.Mock(set_attribute=attributes.__setitem__))
        span.describe_batch({"id": "x"})
        self.assertEqual(attributes, {})
        span.describe_batch([MERGE, {"type": "merge"}, "x"])
        self.assertEqual(attributes, {"icepack.batch.tasks": 3, "icepack.task.ids": [MERGE["id"]]})

    def test_an_unreachable_collector_does_not_change_the_result(self):
        # With or without the SDK installed: no span (warning) or a failed export, same result.
        env = {
            "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{closed_port()}",
            "TRACEPARENT": "00-" + "1" * 32 + "-" + "2" * 16 + "-01",
        }
        out = io.StringIO()
        with mock.patch.dict(os.environ, env), mock.patch.object(job, "SPAN_EXPORT_TIMEOUT_S", 1.0):
            with redirect_stdout(out), redirect_stderr(io.StringIO()):
                code = job.main(["--task-json", json.dumps({**MERGE, "parameters": {}})])
        lines = out.getvalue().splitlines()
        self.assertEqual(code, 2)
        self.assertEqual(len(lines), 1)
        self.assertEqual(json.loads(lines[0])["error"]["message"], "task.parameters.targetFileSizeBytes is required")



def batch_args(result_dir: str, catalog_name: str | None = None):
    return job.parse_args(["--tasks", "-", "--result-dir", result_dir, *(["--catalog-name", catalog_name] if catalog_name else [])])


def merge_on(name: str, task_id: str | None = None, catalog: str = "prod") -> dict:
    task = json.loads(json.dumps(MERGE))
    task["id"] = task_id or f"merge/{catalog}/sales/{name}"
    task["table"] = {"catalog": catalog, "namespace": ["sales"], "name": name}
    return task


class _FakeSession:
    """A session whose `isStopped` the test sets: `alive = False` is Spark gone."""

    def __init__(self) -> None:
        self.alive = True
        self.stopped = False
        self.sparkContext = mock.Mock()
        self.sparkContext._jsc.sc.return_value.isStopped.side_effect = lambda: not self.alive

    def stop(self) -> None:
        self.stopped = True


class BatchTest(unittest.TestCase):
    def run_batch(self, tmp: str, tasks: list, outcomes: dict, session: _FakeSession | None = None, **kw):
        """Runs `tasks` with a fake task runner: `outcomes[table name]` is an exception to raise
        (a callable is called first: it may kill the session); other tables succeed."""
        session = session or _FakeSession()
        ran: list[str] = []

        def run_task(spark, args, task, started, cpu_before):
            self.assertIs(spark, session)
            name = task["table"]["name"]
            ran.append(name)
            outcome = outcomes.get(name)
            if callable(outcome) and not isinstance(outcome, type):
                outcome = outcome()
            if outcome is not None:
                raise outcome
            return {"ok": True, "taskId": task["id"], "exitCode": 0, "cpuSeconds": 1.0}

        with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
            summary = job.run_batch(batch_args(tmp, **kw), tasks, lambda args, kind: session, run_task)
        self.assertTrue(session.stopped)
        return summary, ran

    def result_of(self, tmp: str, task_id: str) -> dict | None:
        path = os.path.join(tmp, job.task_result_name(task_id))
        if not os.path.exists(path):
            return None
        with open(path, encoding="utf-8") as fh:
            return json.loads(fh.read())

    def test_the_batch_file_is_checked_as_a_whole_only_where_tasks_cannot_be_told_apart(self):
        for value, phrase in (
            ({"id": "x"}, "tasks must be a JSON array"),
            ([], "must not be empty"),
            ([merge_on(f"t{i}") for i in range(job.MAX_BATCH_TASKS + 1)], f"at most {job.MAX_BATCH_TASKS}"),
            ([merge_on("a"), {"type": "merge"}], "tasks[1].id is required"),
            ([merge_on("a"), merge_on("b", task_id="merge/prod/sales/a")], "tasks[1].id repeats tasks[0].id"),
        ):
            with self.subTest(phrase=phrase), self.assertRaises(job.BadInput) as raised:
                job.parse_batch(value)
            self.assertIn(phrase, str(raised.exception))
        bad = merge_on("b")
        del bad["parameters"]["minInputFiles"]
        entries = job.parse_batch([merge_on("a"), bad])
        self.assertEqual(entries[0][1]["table"]["name"], "a")
        self.assertIsInstance(entries[1][1], job.BadInput)
        self.assertIn("tasks[1]: task.parameters.minInputFiles is required", str(entries[1][1]))

    def test_result_files_are_named_like_the_dispatchers_task_hash(self):
        # runners/run-key.ts taskHash: sha256 hex of the id, first 16 characters.
        import hashlib

        self.assertEqual(
            job.task_result_name("a/b%c"), hashlib.sha256(b"a/b%c").hexdigest()[:16] + ".json"
        )

    def test_one_tasks_failure_is_its_own_result_and_the_others_run(self):
        bad = merge_on("bad-input")
        bad["type"] = "vacuum"
        tasks = [merge_on("a"), merge_on("dropped"), bad, merge_on("other", catalog="test"), merge_on("c")]
        with tempfile.TemporaryDirectory() as tmp:
            # The Spark name of the catalog does not matter: the tasks' catalogs must agree.
            summary, ran = self.run_batch(
                tmp,
                tasks,
                {"dropped": job.Refused("sales.dropped is not the table the task was planned for")},
                catalog_name="spark_prod",
            )
            results = {t["table"]["name"]: self.result_of(tmp, t["id"]) for t in tasks}
        self.assertEqual(ran, ["a", "dropped", "c"])
        self.assertEqual(summary["exitCode"], 0)
        self.assertEqual(summary["ran"], 3)
        self.assertTrue(results["a"]["ok"] and results["c"]["ok"])
        self.assertEqual(results["dropped"]["error"]["kind"], "refused")
        self.assertEqual(results["dropped"]["taskId"], "merge/prod/sales/dropped")
        self.assertEqual(results["bad-input"]["error"]["kind"], "bad-input")
        self.assertIn("tasks[2]: task.type", results["bad-input"]["error"]["message"])
        self.assertEqual(results["other"]["error"]["kind"], "bad-input")
        self.assertIn("task.table.catalog is test, the batch's is prod", results["other"]["error"]["message"])

    def test_a_failed_session_ends_the_batch_and_leaves_the_rest_without_a_result(self):
        session = _FakeSession()

        def spark_dies():
            session.alive = False
            return RuntimeError("py4j: Answer from Java side is empty")

        tasks = [merge_on("a"), merge_on("b"), merge_on("c")]
        with tempfile.TemporaryDirectory() as tmp:
            summary, ran = self.run_batch(tmp, tasks, {"b": spark_dies}, session)
            results = [self.result_of(tmp, t["id"]) for t in tasks]
        self.assertEqual(ran, ["a", "b"])
        self.assertTrue(results[0]["ok"])
        # b and c have no result: the runner reports them lost, and they are retried.
        self.assertEqual(results[1:], [None, None])
        self.assertEqual(summary["exitCode"], job.ExitCode.FAILED)
        self.assertEqual(summary["ran"], 1)

    def test_a_task_with_a_result_is_never_run_again(self):
        tasks = [merge_on("a"), merge_on("b")]
        with tempfile.TemporaryDirectory() as tmp:
            first, ran_first = self.run_batch(tmp, tasks[:1], {})
            again, ran_again = self.run_batch(tmp, tasks, {})
        self.assertEqual(ran_first, ["a"])
        self.assertEqual(ran_again, ["b"])
        self.assertEqual(again["skipped"], 1)

    def test_main_writes_the_batch_summary_and_exits_2_on_a_bad_batch(self):
        with tempfile.TemporaryDirectory() as tmp, redirect_stdout(io.StringIO()) as out:
            tasks_file = os.path.join(tmp, "tasks.json")
            with open(tasks_file, "w", encoding="utf-8") as fh:
                fh.write("[]")
            # Not made yet: a bad batch ends before run_batch makes it, and still leaves its summary.
            result_dir = os.path.join(tmp, "results")
            code = job.main(["--tasks", tasks_file, "--result-dir", result_dir])
            with open(os.path.join(result_dir, job.BATCH_RESULT_FILE), encoding="utf-8") as fh:
                summary = json.loads(fh.read())
        self.assertEqual(code, 2)
        self.assertEqual(summary["error"]["kind"], "bad-input")
        self.assertEqual(json.loads(out.getvalue().splitlines()[-1]), summary)

    def test_the_summary_holds_each_ended_tasks_outcome_by_task_key(self):
        tasks = [merge_on("a"), merge_on("dropped"), merge_on("c")]
        with tempfile.TemporaryDirectory() as tmp:
            summary, _ = self.run_batch(tmp, tasks, {"dropped": job.Refused("not the planned table")})
        key = lambda t: job.task_key(t["id"])  # noqa: E731
        self.assertEqual(summary["tasks"][key(tasks[0])], {"exitCode": 0, "cpuSeconds": 1.0})
        self.assertEqual(summary["tasks"][key(tasks[1])]["error"]["kind"], "refused")
        self.assertEqual(summary["tasks"][key(tasks[1])]["exitCode"], job.ExitCode.REFUSED)
        self.assertIn(key(tasks[2]), summary["tasks"])

    def test_a_summary_too_long_for_the_termination_message_keeps_every_tasks_exit_code_and_kind(self):
        outcomes = {
            f"{i:016x}": {"exitCode": 5, "error": {"kind": "io", "message": "x" * 2000, "retryable": True}}
            for i in range(20)
        }
        outcomes["f" * 16] = {"exitCode": 0, "durationMs": 1234, "cpuSeconds": 2.5}
        summary = {"batch": 21, "exitCode": 0, "tasks": outcomes}
        fitted = job.fit_summary(summary, job.TERMINATION_MESSAGE_LIMIT)
        self.assertLessEqual(len(job.result_line(fitted).encode("utf-8")), job.TERMINATION_MESSAGE_LIMIT)
        self.assertEqual(set(fitted["tasks"]), set(outcomes))
        for key, outcome in outcomes.items():
            self.assertEqual(fitted["tasks"][key]["exitCode"], outcome["exitCode"])
            if "error" in outcome:
                self.assertEqual(fitted["tasks"][key]["error"]["kind"], "io")
                self.assertTrue(fitted["tasks"][key]["error"]["retryable"])
        # The summary itself is untouched (it goes to stdout and batch.json whole).
        self.assertEqual(len(summary["tasks"]["0" * 16]["error"]["message"]), 2000)
        # One that fits is written as it is.
        small = {"batch": 1, "exitCode": 0, "tasks": {"f" * 16: {"exitCode": 0, "durationMs": 5}}}
        self.assertEqual(job.fit_summary(small, job.TERMINATION_MESSAGE_LIMIT), small)

    def test_a_failed_sessions_long_error_is_shortened_so_the_tasks_are_not_reported_lost(self):
        # The batch's own error (its session died) once stayed whole: a long Java stack trace
        # pushed the line over the limit, it was not written, and every task was reported lost.
        outcomes = {f"{i:016x}": {"exitCode": 6, "error": {"kind": "session", "retryable": True}} for i in range(20)}
        error = {"kind": "session", "message": "java.lang.IllegalStateException " * 200, "retryable": True}
        summary = {"batch": 20, "exitCode": 6, "error": error, "tasks": outcomes}
        fitted = job.fit_summary(summary, job.TERMINATION_MESSAGE_LIMIT)
        self.assertLessEqual(len(job.result_line(fitted).encode("utf-8")), job.TERMINATION_MESSAGE_LIMIT)
        self.assertEqual(fitted["error"]["kind"], "session")
        self.assertLessEqual(len(fitted["error"]["message"]), 120)
        self.assertEqual(set(fitted["tasks"]), set(outcomes))

    def test_a_tasks_outcome_carries_the_figures_of_its_full_result_in_the_documented_order(self):
        # The same pair the dispatcher's job-result.test.ts reads: both runners' figures agree.
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "testdata", "batch-task-outcome.json")
        with open(path, encoding="utf-8") as fh:
            pair = json.load(fh)
        self.assertEqual(job.task_outcome(pair["result"]), pair["outcome"])
        # A heap that cannot be told leaves its place empty at the end; no memory, no array.
        without_heap = {**pair["result"], "memory": {"peakHeapBytes": 5, "cores": 1}}
        self.assertEqual(job.task_outcome(without_heap)["memory"], [5, 1])
        bare = {"ok": True, "exitCode": 0, "durationMs": 7}
        self.assertEqual(job.task_outcome(bare), {"exitCode": 0, "durationMs": 7})
        # A failure carries its error, never figures.
        failure = {"ok": False, "exitCode": 5, "error": {"kind": "io", "message": "m", "retryable": True}}
        self.assertEqual(job.task_outcome(failure), {"exitCode": 5, "error": failure["error"]})

    def big_success(self) -> dict:
        """A success's outcome with figures as long as a batch's small tasks ever have (10 GiB)."""
        tib = 10 * 1024**3
        return job.task_outcome(
            {
                "ok": True,
                "exitCode": 0,
                "durationMs": 1_234_567,
                "cpuSeconds": 12345.678,
                "before": {"snapshots": 10_000},
                "after": {"snapshots": 10_001},
                "commits": {
                    "bytesRead": tib,
                    "bytesWritten": tib,
                    "filesRewritten": 100_000,
                    "dataFilesRemoved": 100_000,
                    "deleteFilesRemoved": 10_000,
                },
                "memory": {"peakHeapBytes": tib, "heapBytes": tib, "cores": 16},
            }
        )

    def test_a_batch_of_20_with_every_figure_fits_the_termination_message_whole(self):
        summary = {
            "batch": 20,
            "skipped": 0,
            "ran": 20,
            "exitCode": 0,
            "tasks": {job.task_key(f"lake/db.table_{i}/merge"): self.big_success() for i in range(20)},
        }
        self.assertLessEqual(len(job.result_line(summary).encode("utf-8")), job.TERMINATION_MESSAGE_LIMIT)
        self.assertEqual(job.fit_summary(summary, job.TERMINATION_MESSAGE_LIMIT), summary)

    def test_figures_are_dropped_after_the_error_messages_heap_first_then_commits(self):
        failed = {"exitCode": 5, "error": {"kind": "io", "message": "x" * 300, "retryable": True}}
        summary = {"batch": 4, "exitCode": 0, "tasks": {"a" * 16: self.big_success(), "b" * 16: failed}}

        def line(value: dict) -> int:
            return len(job.result_line(value).encode("utf-8"))

        def without(*keys: str) -> dict:
            value = json.loads(json.dumps(summary))
            value["tasks"]["b" * 16]["error"].pop("message")
            for key in keys:
                value["tasks"]["a" * 16].pop(key)
            return value

        # Room for every figure once the message is gone: the message goes, the figures stay.
        self.assertEqual(job.fit_summary(summary, line(without())), without())
        self.assertEqual(job.fit_summary(summary, line(without("memory"))), without("memory"))
        self.assertEqual(
            job.fit_summary(summary, line(without("memory", "commits"))), without("memory", "commits")
        )
        bare = job.fit_summary(summary, 10)
        self.assertEqual(bare["tasks"], {"a" * 16: {"exitCode": 0}, "b" * 16: {"exitCode": 5, "error": {"kind": "io", "retryable": True}}})

    def test_tasks_json_runs_a_batch_with_results_only_in_the_termination_message(self):
        # The Spark operator runner's way: the task list in the arguments, no result directory
        # (a driver pod's disk outlives nothing), the outcomes in the termination message. A bad
        # batch here: the summary still reaches the termination message.
        with tempfile.TemporaryDirectory() as tmp, redirect_stdout(io.StringIO()):
            termination = os.path.join(tmp, "termination-log")
            code = job.main(["--tasks-json", "[]", "--termination-log", termination])
            with open(termination, encoding="utf-8") as fh:
                summary = json.loads(fh.read())
        self.assertEqual(code, 2)
        self.assertEqual(summary["error"]["kind"], "bad-input")
        self.assertIn("must not be empty", summary["error"]["message"])

    def test_tasks_json_without_a_result_directory_writes_no_file_and_skips_nothing(self):
        args = job.parse_args(["--tasks-json", "[]", "--termination-log", "/dev/null"])
        tasks = [merge_on("a"), merge_on("b")]
        session = _FakeSession()
        with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
            summary = job.run_batch(
                args,
                tasks,
                lambda a, kind: session,
                lambda spark, a, task, started, cpu: {"ok": True, "taskId": task["id"], "exitCode": 0, "durationMs": 7},
            )
        self.assertEqual(summary["ran"], 2)
        self.assertEqual(summary["skipped"], 0)
        self.assertEqual(
            summary["tasks"], {job.task_key(t["id"]): {"exitCode": 0, "durationMs": 7} for t in tasks}
        )

    def test_tasks_json_needs_somewhere_for_its_results(self):
        with redirect_stderr(io.StringIO()), self.assertRaises(SystemExit):
            job.parse_args(["--tasks-json", "[]"])

    def test_tasks_needs_a_result_directory(self):
        with redirect_stderr(io.StringIO()), self.assertRaises(SystemExit):
            job.parse_args(["--tasks", "t.json"])


UUID = "6f9f3b4e-2d7c-4d7e-9b1a-0c8e5f1a2b3c"
ORPHAN_NOW_MS = job.parse_instant_ms("2026-12-10T12:00:00Z", "now")


class _Clock:
    """A clock that only `sleep` moves: the inbox's idle bound without waiting."""

    def __init__(self) -> None:
        self.now = 100.0
        self.on_sleep: list = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        if self.on_sleep:
            self.on_sleep.pop(0)()

    def wall(self) -> float:
        """The wall clock (seconds since the epoch), moving with this one."""
        return WALL_AT_100 + self.now - 100.0


#: The wall clock when a _Clock reads 100.
WALL_AT_100 = 1_800_000_000.0


def open_inbox(tmp: str) -> str:
    """A resident batch's inbox as the dispatcher makes it before the launch."""
    inbox = os.path.join(tmp, "inbox")
    os.makedirs(inbox)
    return inbox


def append(inbox: str, name: str, tasks: list) -> None:
    """The dispatcher's append: written beside the inbox, renamed in (raises when it is closed)."""
    tmp = os.path.join(os.path.dirname(inbox), f".{name}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(tasks))
    os.rename(tmp, os.path.join(inbox, name))


class InboxTest(unittest.TestCase):
    """A resident session (`--inbox`, ADR 0045): task lists renamed into the inbox after the
    batch's own run in the same session; the inbox closed by renaming it."""

    def run_resident(
        self, tmp: str, tasks: list, clock: _Clock, outcomes: dict | None = None, idle="5", max_tasks=None, close_by=None
    ):
        session = _FakeSession()
        sessions: list = []
        ran: list[str] = []
        outcomes = outcomes or {}

        def start(args, kind):
            sessions.append(session)
            return session

        def run_task(spark, args, task, started, cpu_before):
            name = task["table"]["name"]
            ran.append(name)
            clock.now += 1.0  # each task takes a second
            outcome = outcomes.get(name)
            if callable(outcome):
                raise outcome()
            return {"ok": True, "taskId": task["id"], "exitCode": 0, "durationMs": int((clock.now - started) * 1000)}

        argv = ["--tasks", "-", "--result-dir", os.path.join(tmp, "results"), "--inbox", os.path.join(tmp, "inbox"), "--idle-seconds", idle]
        if max_tasks is not None:
            argv += ["--max-tasks", str(max_tasks)]
        if close_by is not None:
            argv += ["--close-by", str(close_by)]
        with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
            summary = job.run_batch(job.parse_args(argv), tasks, start, run_task, clock, clock.sleep, clock.wall)
        self.assertTrue(session.stopped)
        return summary, ran, len(sessions)

    def result_of(self, tmp: str, task_id: str) -> dict | None:
        path = os.path.join(tmp, "results", job.task_result_name(task_id))
        if not os.path.exists(path):
            return None
        with open(path, encoding="utf-8") as fh:
            return json.loads(fh.read())

    def test_a_list_appended_while_the_inbox_is_open_runs_in_the_same_session_then_the_inbox_closes(self):
        clock = _Clock()
        with tempfile.TemporaryDirectory() as tmp:
            inbox = open_inbox(tmp)
            # Two seconds into the wait, the dispatcher appends b.
            clock.on_sleep = [lambda: None] * 7 + [lambda: append(inbox, "0001.json", [merge_on("b")])]
            summary, ran, sessions = self.run_resident(tmp, [merge_on("a")], clock)
            b = self.result_of(tmp, merge_on("b")["id"])
            self.assertFalse(os.path.exists(inbox))
            self.assertEqual(os.listdir(inbox + ".closed"), [])
            with self.assertRaises(FileNotFoundError):
                append(inbox, "0002.json", [merge_on("c")])
        self.assertEqual((ran, sessions), (["a", "b"], 1))
        self.assertTrue(b["ok"])
        # b waited 2 s in a held session: its own duration is its run, the wait is idleMs.
        self.assertEqual((b["durationMs"], b["idleMs"]), (1000, 2000))
        self.assertEqual((summary["batch"], summary["appended"], summary["ran"]), (2, 1, 2))
        # After b, the session waited the whole idle bound before closing.
        self.assertEqual(summary["idleMs"], 5000)

    def test_a_list_renamed_in_just_before_the_close_runs_from_the_closed_inbox(self):
        clock = _Clock()
        real_close = job.close_inbox

        def late_append_then_close(inbox):
            append(inbox, "0001.json", [merge_on("late")])
            return real_close(inbox)

        with tempfile.TemporaryDirectory() as tmp, mock.patch.object(job, "close_inbox", late_append_then_close):
            open_inbox(tmp)
            summary, ran, _ = self.run_resident(tmp, [merge_on("a")], clock)
            late = self.result_of(tmp, merge_on("late")["id"])
            self.assertEqual(os.listdir(os.path.join(tmp, "inbox.closed")), [])
        self.assertEqual(ran, ["a", "late"])
        self.assertTrue(late["ok"])
        self.assertEqual(summary["appended"], 1)

    def test_the_inbox_closes_once_max_tasks_were_taken_and_accepted_lists_still_run(self):
        clock = _Clock()
        with tempfile.TemporaryDirectory() as tmp:
            inbox = open_inbox(tmp)
            append(inbox, "0001.json", [merge_on("b")])
            append(inbox, "0002.json", [merge_on("c")])
            summary, ran, _ = self.run_resident(tmp, [merge_on("a")], clock, max_tasks=2)
            closed = os.listdir(inbox + ".closed")
        # a and b reach the bound; c was renamed in before the close: accepted, so it runs.
        self.assertEqual(ran, ["a", "b", "c"])
        self.assertEqual(closed, [])
        self.assertEqual(summary["idleMs"], 0)

    def test_the_inbox_closes_at_the_close_time_before_the_idle_bound(self):
        clock = _Clock()
        with tempfile.TemporaryDirectory() as tmp:
            inbox = open_inbox(tmp)
            # a runs from 100 to 101; b is appended at 101.25 and runs to 102.25; the dispatcher's
            # close time is 104 (wall): the session closes then, not 600 s after b.
            clock.on_sleep = [lambda: append(inbox, "0001.json", [merge_on("b")])]
            summary, ran, _ = self.run_resident(tmp, [merge_on("a")], clock, idle="600", close_by=WALL_AT_100 + 4)
            closed_at = clock.now
            with self.assertRaises(FileNotFoundError):
                append(inbox, "0002.json", [merge_on("c")])
        self.assertEqual(ran, ["a", "b"])
        self.assertGreaterEqual(closed_at, 104.0)
        self.assertLess(closed_at, 104.0 + job.INBOX_POLL_SECONDS + 1e-9)
        self.assertEqual(summary["idleMs"], 1750)

    def test_a_list_in_the_inbox_at_the_close_time_still_runs(self):
        clock = _Clock()
        with tempfile.TemporaryDirectory() as tmp:
            inbox = open_inbox(tmp)
            append(inbox, "0001.json", [merge_on("b")])
            # The close time passed while a ran: b was accepted before it, so b runs.
            summary, ran, _ = self.run_resident(tmp, [merge_on("a")], clock, idle="600", close_by=WALL_AT_100 + 0.5)
            b = self.result_of(tmp, merge_on("b")["id"])
            self.assertFalse(os.path.exists(inbox))
            self.assertEqual(os.listdir(inbox + ".closed"), [])
        self.assertEqual(ran, ["a", "b"])
        self.assertTrue(b["ok"])
        self.assertEqual(summary["appended"], 1)

    def test_inbox_close_at_puts_the_wall_clock_close_time_on_the_session_clock(self):
        self.assertEqual(job.inbox_close_at(100.0, 1_800_000_030.0, 1_800_000_000.0), 130.0)
        # Already past: the inbox closes at once.
        self.assertEqual(job.inbox_close_at(100.0, 1_799_999_990.0, 1_800_000_000.0), 90.0)
        self.assertIsNone(job.inbox_close_at(100.0, None, 1_800_000_000.0))

    def test_an_appended_task_with_a_result_is_not_run_again(self):
        clock = _Clock()
        with tempfile.TemporaryDirectory() as tmp:
            inbox = open_inbox(tmp)
            append(inbox, "0001.json", [merge_on("a"), merge_on("b")])
            summary, ran, _ = self.run_resident(tmp, [merge_on("a")], clock)
        self.assertEqual(ran, ["a", "b"])
        self.assertEqual(summary["skipped"], 1)

    def test_an_appended_task_of_another_catalog_is_bad_input_of_its_own(self):
        clock = _Clock()
        with tempfile.TemporaryDirectory() as tmp:
            inbox = open_inbox(tmp)
            append(inbox, "0001.json", [merge_on("x", catalog="test"), merge_on("b")])
            _, ran, _ = self.run_resident(tmp, [merge_on("a")], clock)
            other = self.result_of(tmp, merge_on("x", catalog="test")["id"])
        self.assertEqual(ran, ["a", "b"])
        self.assertEqual(other["error"]["kind"], "bad-input")

    def test_a_dead_session_closes_the_inbox_and_leaves_the_lists_in_it_without_results(self):
        clock = _Clock()
        session_gone = {}

        with tempfile.TemporaryDirectory() as tmp:
            inbox = open_inbox(tmp)
            append(inbox, "0001.json", [merge_on("b")])
            append(inbox, "0002.json", [merge_on("c")])

            def dies():
                session_gone["yes"] = True
                return RuntimeError("py4j: Answer from Java side is empty")

            with mock.patch.object(job, "session_alive", lambda spark: "yes" not in session_gone):
                summary, ran, _ = self.run_resident(tmp, [merge_on("a")], clock, outcomes={"b": dies})
            left = sorted(os.listdir(inbox + ".closed"))
            results = [self.result_of(tmp, merge_on(n)["id"]) for n in ("b", "c")]
        self.assertEqual(ran, ["a", "b"])
        self.assertEqual(summary["exitCode"], job.ExitCode.FAILED)
        # Closed: the dispatcher's next append fails. b and c have no result: lost, retried.
        self.assertFalse(os.path.exists(inbox))
        self.assertEqual(left, ["0001.json", "0002.json"])
        self.assertEqual(results, [None, None])

    def test_a_bad_list_in_the_inbox_is_set_aside_and_the_session_goes_on(self):
        clock = _Clock()
        with tempfile.TemporaryDirectory() as tmp:
            inbox = open_inbox(tmp)
            append(inbox, "0001.json", {"not": "a list"})
            append(inbox, "0002.json", [merge_on("b")])
            summary, ran, _ = self.run_resident(tmp, [merge_on("a")], clock)
            left = os.listdir(inbox + ".closed")
        self.assertEqual(ran, ["a", "b"])
        self.assertEqual(summary["badInboxFiles"], 1)
        self.assertEqual(left, ["0001.json.bad"])

    def test_main_closes_the_inbox_of_a_bad_batch(self):
        with tempfile.TemporaryDirectory() as tmp, redirect_stdout(io.StringIO()):
            tasks_file = os.path.join(tmp, "tasks.json")
            with open(tasks_file, "w", encoding="utf-8") as fh:
                fh.write("[]")
            inbox = open_inbox(tmp)
            code = job.main(["--tasks", tasks_file, "--result-dir", os.path.join(tmp, "r"), "--inbox", inbox])
            self.assertEqual(code, 2)
            self.assertFalse(os.path.exists(inbox))
            self.assertTrue(os.path.isdir(inbox + ".closed"))

    def test_inbox_arguments_are_checked(self):
        for argv, phrase in (
            (["--task", "-", "--inbox", "/tmp/x"], "--inbox takes --tasks"),
            (["--tasks", "-", "--result-dir", "/tmp/r", "--inbox", "/tmp/x", "--idle-seconds", "-1"], "--idle-seconds must be 0 or more"),
            (["--tasks", "-", "--result-dir", "/tmp/r", "--inbox", "/tmp/x", "--max-tasks", "0"], "--max-tasks must be 1 or more"),
            (["--tasks", "-", "--result-dir", "/tmp/r", "--close-by", "1800000000"], "--close-by takes --inbox"),
        ):
            with self.subTest(phrase=phrase), redirect_stderr(io.StringIO()) as err, self.assertRaises(SystemExit):
                job.parse_args(argv)
            self.assertIn(phrase, err.getvalue())


def orphans_task(older_than: str = "2026-12-07T12:00:00Z", window_ms: int = 7 * job.DAY_MS) -> dict:
    return {
        "id": "orphans/prod/sales/orders",
        "type": "orphans",
        "table": {"catalog": "prod", "namespace": ["sales"], "name": "orders"},
        "state": {"tableUuid": UUID},
        "parameters": {"olderThan": older_than, "quarantineWindowMs": window_ms, "maxFiles": 100},
    }


class OrphanGuardTest(unittest.TestCase):
    def test_parse_names_the_missing_or_bad_field(self):
        self.assertEqual(job.parse_task(orphans_task())["type"], "orphans")
        for key, bad, message in (
            ("olderThan", "yesterday", "task.parameters.olderThan"),
            ("quarantineWindowMs", -1, "task.parameters.quarantineWindowMs must be at least 0"),
            ("maxFiles", 0, "task.parameters.maxFiles must be at least 1"),
        ):
            task = orphans_task()
            task["parameters"][key] = bad
            with self.assertRaises(job.BadInput) as caught:
                job.parse_task(task)
            self.assertIn(message, str(caught.exception))

    def test_the_cutoff_is_never_younger_than_a_day_whatever_the_task_says(self):
        task = orphans_task(older_than="2026-12-10T11:59:00Z")
        limits = job.guard_table(task, UUID, False, {}, ORPHAN_NOW_MS)
        self.assertEqual(limits["olderThanMs"], ORPHAN_NOW_MS - job.DAY_MS)
        # An older cutoff in the task is kept: the more conservative one applies.
        limits = job.guard_table(orphans_task(older_than="2026-12-01T00:00:00Z"), UUID, False, {}, ORPHAN_NOW_MS)
        self.assertEqual(job.format_instant_ms(limits["olderThanMs"]), "2026-12-01T00:00:00.000Z")

    def test_the_tables_own_min_age_and_window_win_when_longer(self):
        props = {job.ORPHAN_MIN_AGE_KEY: "10d", job.ORPHAN_QUARANTINE_WINDOW_KEY: "30d"}
        limits = job.guard_table(orphans_task(), UUID, False, props, ORPHAN_NOW_MS)
        self.assertEqual(limits, {"olderThanMs": ORPHAN_NOW_MS - 10 * job.DAY_MS, "quarantineWindowMs": 30 * job.DAY_MS})
        # Shorter or unreadable table values do not loosen the task's.
        props = {job.ORPHAN_MIN_AGE_KEY: "2h", job.ORPHAN_QUARANTINE_WINDOW_KEY: "soon"}
        limits = job.guard_table(orphans_task(), UUID, False, props, ORPHAN_NOW_MS)
        self.assertEqual(limits["quarantineWindowMs"], 7 * job.DAY_MS)
        self.assertEqual(job.format_instant_ms(limits["olderThanMs"]), "2026-12-07T12:00:00.000Z")

    def test_refuses_gc_off_a_nessie_table_the_switch_and_another_uuid(self):
        for props, phrase in (
            ({"gc.enabled": "false"}, "gc.enabled=false"),
            ({"nessie.commit.id": "abc"}, "Nessie"),
            ({"icepack.orphan.enabled": "false"}, "icepack.orphan.enabled=false"),
        ):
            with self.assertRaises(job.Refused) as caught:
                job.guard_table(orphans_task(), UUID, False, props, ORPHAN_NOW_MS)
            self.assertIn(phrase, str(caught.exception))
        with self.assertRaises(job.Refused):
            job.guard_table(orphans_task(), "another-uuid", False, {}, ORPHAN_NOW_MS)

    def test_reads_durations_as_the_runtime_does(self):
        self.assertEqual(job.parse_duration_ms("3d"), 3 * job.DAY_MS)
        self.assertEqual(job.parse_duration_ms("90s"), 90_000)
        self.assertEqual(job.parse_duration_ms(" 1500 "), 1500)
        self.assertIsNone(job.parse_duration_ms("3 days"))


class OtherTablesTest(unittest.TestCase):
    LOC = "s3://lake/warehouse/sales/orders"

    def test_nested_tables_and_data_paths_pointing_in_are_excluded(self):
        others = [
            {"name": "sales.orders_eu", "location": f"{self.LOC}/eu", "properties": {}},
            {"name": "sales.items", "location": "s3://lake/warehouse/sales/items",
             "properties": {"write.data.path": f"s3a://lake/warehouse/sales/orders/items-data"}},
            # A parent table: its files are in its own data and metadata directories.
            {"name": "sales.all", "location": "s3://lake/warehouse/sales", "properties": {}},
            {"name": "sales.ordersx", "location": "s3://lake/warehouse/sales/ordersx", "properties": {}},
        ]
        self.assertEqual(
            job.excluded_prefixes("sales.orders", self.LOC, others),
            [f"{self.LOC}/eu", f"{self.LOC}/items-data"],
        )

    def test_a_shared_location_or_one_inside_anothers_files_is_refused(self):
        for other in (
            {"name": "sales.copy", "location": self.LOC + "/", "properties": {}},
            {"name": "sales.base", "location": "s3://lake/warehouse/sales/orders/..", "properties": {"write.data.path": "s3://lake/warehouse/sales"}},
            {"name": "sales.up", "location": "s3://lake/w/up", "properties": {"write.data.path": "s3://lake/warehouse"}},
        ):
            with self.assertRaises(job.Refused) as caught:
                job.excluded_prefixes("sales.orders", self.LOC, [other])
            self.assertIn(other["name"], str(caught.exception))

    def test_candidates_skip_the_quarantine_other_tables_and_foreign_paths(self):
        paths = [
            f"{self.LOC}/data/old.parquet",
            f"{self.LOC}/.icepack-quarantine/20261201T000000Z-abcdef/data/x.parquet",
            f"{self.LOC}/eu/data/nested.parquet",
            "s3://lake/warehouse/sales/ordersx/data/neighbour.parquet",
            f"{self.LOC}/metadata/00001-old.metadata.json",
        ]
        self.assertEqual(
            job.orphan_candidates(paths, self.LOC, [f"{self.LOC}/eu"]),
            [f"{self.LOC}/data/old.parquet", f"{self.LOC}/metadata/00001-old.metadata.json"],
        )


class QuarantineTest(unittest.TestCase):
    """Quarantine, purge and restore on a table location on the local filesystem."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.loc = "file:" + os.path.join(self.dir.name, "orders")
        self.store = job.LocalStore()
        self.files = {
            "data/live.parquet": b"live rows",
            "data/p=1/orphan-1.parquet": b"an orphan",
            "metadata/snap-old.avro": b"old manifest list",
        }
        for relative, content in self.files.items():
            path = os.path.join(self.dir.name, "orders", relative)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as fh:
                fh.write(content)
        self.table = {"table": orphans_task()["table"], "uuid": UUID}

    def tearDown(self):
        self.dir.cleanup()

    def path(self, relative: str) -> str:
        return f"{self.loc}/{relative}"

    def read(self, path: str) -> bytes | None:
        try:
            with open(job.LocalStore._os(path), "rb") as fh:
                return fh.read()
        except FileNotFoundError:
            return None

    def quarantine(self, relatives, **kwargs):
        return job.quarantine_orphans(
            self.store, self.table, self.loc, [self.path(r) for r in relatives], ORPHAN_NOW_MS, ORPHAN_NOW_MS - job.DAY_MS,
            kwargs.pop("max_files", 100), **kwargs,
        )

    def test_moves_orphans_with_a_manifest_and_restore_puts_them_back_exactly(self):
        orphans = ["data/p=1/orphan-1.parquet", "metadata/snap-old.avro"]
        out = self.quarantine(orphans)
        self.assertEqual((out["quarantined"], out["quarantinedBytes"], out["failed"]), (2, 26, 0))
        for relative in orphans:
            self.assertIsNone(self.read(self.path(relative)))
            self.assertEqual(
                self.read(job.quarantine_path(self.loc, out["run"], self.path(relative))), self.files[relative]
            )
        self.assertEqual(self.read(self.path("data/live.parquet")), b"live rows")
        manifest = json.loads(self.read(out["manifest"]))
        self.assertEqual((manifest["tableUuid"], manifest["complete"]), (UUID, True))
        self.assertEqual(sorted(e["path"] for e in manifest["files"]), [self.path(r) for r in sorted(orphans)])

        restored = job.restore_quarantine(self.store, self.loc, UUID, out["run"])
        self.assertEqual((restored["restored"], restored["restoredBytes"]), (2, 26))
        for relative, content in self.files.items():
            self.assertEqual(self.read(self.path(relative)), content)
        self.assertIsNone(self.read(out["manifest"]))
        self.assertEqual([p for p, _ in self.store.list(job.quarantine_root(self.loc))], [])

    def test_restore_never_overwrites_a_file_that_is_back_and_checks_the_table(self):
        out = self.quarantine(["data/p=1/orphan-1.parquet"])
        with open(job.LocalStore._os(self.path("data/p=1/orphan-1.parquet")), "wb") as fh:
            fh.write(b"new content")
        with self.assertRaises(job.Refused):
            job.restore_quarantine(self.store, self.loc, "another-uuid", out["run"])
        restored = job.restore_quarantine(self.store, self.loc, UUID, out["run"])
        self.assertEqual((restored["restored"], restored["alreadyPresent"]), (0, 1))
        self.assertEqual(self.read(self.path("data/p=1/orphan-1.parquet")), b"new content")
        # The quarantined copy and its manifest stay for the operator to decide.
        self.assertIsNotNone(self.read(out["manifest"]))
        with self.assertRaises(job.BadInput):
            job.restore_quarantine(self.store, self.loc, UUID, "20261201T000000Z-000000")
        with self.assertRaises(job.BadInput):
            job.restore_quarantine(self.store, self.loc, UUID, "../../etc")

    def test_a_file_referenced_again_or_over_the_bound_stays(self):
        orphans = ["data/p=1/orphan-1.parquet", "metadata/snap-old.avro"]
        out = self.quarantine(orphans, still_referenced=lambda paths: {self.path("metadata/snap-old.avro")})
        self.assertEqual((out["quarantined"], out["referencedAgain"]), (1, 1))
        self.assertEqual(self.read(self.path("metadata/snap-old.avro")), b"old manifest list")
        out = self.quarantine(["data/live.parquet", "metadata/snap-old.avro"], max_files=1)
        self.assertEqual((out["quarantined"], out["deferred"]), (1, 1))
        self.assertEqual(self.read(self.path("metadata/snap-old.avro")), b"old manifest list")

    def test_a_failed_move_leaves_the_file_in_place(self):
        relative = "data/p=1/orphan-1.parquet"
        store = self.store

        class FailingCopy(job.LocalStore):
            def copy(self, source, target):
                raise OSError("disk full")

        self.store = FailingCopy()
        out = self.quarantine([relative])
        self.store = store
        self.assertEqual((out["quarantined"], out["failed"]), (0, 1))
        self.assertEqual(self.read(self.path(relative)), self.files[relative])
        entry = json.loads(self.read(out["manifest"]))["files"][0]
        self.assertEqual(entry["state"], "failed")

    def test_purge_deletes_a_run_only_after_its_window_and_only_its_own_files(self):
        out = self.quarantine(["data/p=1/orphan-1.parquet"])
        kept = job.purge_quarantine(self.store, self.loc, UUID, ORPHAN_NOW_MS + job.DAY_MS, 7 * job.DAY_MS)
        self.assertEqual((kept["purgedRuns"], kept["keptRuns"]), (0, 1))
        self.assertIsNotNone(self.read(out["manifest"]))
        # Another table's manifest (a forged or copied one) is never followed.
        forged = json.loads(self.read(out["manifest"]))
        forged["tableUuid"] = "another-uuid"
        other_run = "20261101T000000Z-0000aa"
        self.store.write_text(f"{job.quarantine_root(self.loc)}/{other_run}/{job.QUARANTINE_MANIFEST}", json.dumps(forged))
        purged = job.purge_quarantine(self.store, self.loc, UUID, ORPHAN_NOW_MS + 7 * job.DAY_MS, 7 * job.DAY_MS)
        self.assertEqual(
            {k: purged[k] for k in ("purgedRuns", "purgedFiles", "purgedBytes", "unreadableRuns")},
            {"purgedRuns": 1, "purgedFiles": 1, "purgedBytes": 9, "unreadableRuns": 1},
        )
        self.assertIsNone(self.read(out["manifest"]))
        self.assertEqual(self.read(self.path("data/live.parquet")), b"live rows")
        self.assertIsNone(self.read(self.path("data/p=1/orphan-1.parquet")))


class RestoreArgsTest(unittest.TestCase):
    def test_restore_needs_an_orphans_task_and_one_task(self):
        out = io.StringIO()
        with redirect_stdout(out), redirect_stderr(io.StringIO()):
            code = job.main(["--task-json", json.dumps(MERGE), "--restore-run", "20261202T221500Z-3fa9c1"])
        self.assertEqual(code, 2)
        self.assertIn("--restore-run needs an orphans task", json.loads(out.getvalue())["error"]["message"])
        with redirect_stderr(io.StringIO()), self.assertRaises(SystemExit):
            job.parse_args(["--tasks", "-", "--result-dir", "/tmp/x", "--restore-run", "r"])


class _JavaClass:
    def __init__(self, name, superclass=None, interfaces=()):
        self._name, self._super, self._interfaces = name, superclass, list(interfaces)

    def getName(self):
        return self._name

    def getSuperclass(self):
        return self._super

    def getInterfaces(self):
        return self._interfaces


class _JavaObject:
    def __init__(self, cls):
        self._cls = cls

    def getClass(self):
        return self._cls


class PrefixListingTest(unittest.TestCase):
    def test_finds_the_interface_through_superclasses_and_super_interfaces(self):
        prefix = _JavaClass("org.apache.iceberg.io.SupportsPrefixOperations")
        delegate = _JavaClass("org.apache.iceberg.io.DelegateFileIO", interfaces=[prefix])
        s3 = _JavaClass("org.apache.iceberg.aws.s3.S3FileIO", interfaces=[delegate])
        subclass = _JavaClass("com.example.MyS3FileIO", superclass=s3)
        self.assertTrue(job.lists_prefixes(_JavaObject(subclass)))
        plain = _JavaClass("com.example.PlainFileIO", interfaces=[_JavaClass("org.apache.iceberg.io.FileIO")])
        self.assertFalse(job.lists_prefixes(_JavaObject(plain)))


class _JavaIterable:
    """A Java Iterable as Py4J hands it over: `iterator()` with `hasNext`/`next`."""

    def __init__(self, items):
        self._items = list(items)

    def isEmpty(self):
        return not self._items

    def iterator(self):
        items = iter(self._items)
        pending = [next(items, None)]

        class _It:
            def hasNext(self):
                return pending[0] is not None

            def next(self):
                value = pending[0]
                pending[0] = next(items, None)
                return value

        return _It()


def _Manifest(added, existing):
    """A delete manifest of the manifest list: whether it holds added or existing files."""
    return mock.Mock(**{"hasAddedFiles.return_value": added, "hasExistingFiles.return_value": existing})


class _Snapshot:
    def __init__(self, delete_manifests):
        self._deletes = delete_manifests

    def deleteManifests(self, io):
        return _JavaIterable(self._deletes)


class _DanglingTable:
    def __init__(self, snapshot):
        self._snapshot = snapshot

    def currentSnapshot(self):
        return self._snapshot

    def io(self):
        return None


class _DanglingSession:
    """Just what remove_dangling_deletes calls on a v2 table before the position-delete rewrite."""

    def __init__(self):
        jvm = mock.MagicMock()
        jvm.org.apache.iceberg.TableUtil.formatVersion.return_value = 2
        jvm.org.apache.iceberg.relocated.com.google.common.collect.Iterables.size.return_value = 0
        self.sparkContext = mock.MagicMock(_jvm=jvm)


class DanglingScanTest(unittest.TestCase):
    NO_REWRITE = {"rewritePositionDeletes": False}

    def test_a_table_without_live_delete_files_has_none(self):
        self.assertFalse(job.has_live_delete_files(_DanglingTable(None)))
        self.assertFalse(job.has_live_delete_files(_DanglingTable(_Snapshot([]))))
        # A delete manifest whose files were all removed holds none live.
        self.assertFalse(job.has_live_delete_files(_DanglingTable(_Snapshot([_Manifest(False, False)]))))
        self.assertTrue(job.has_live_delete_files(_DanglingTable(_Snapshot([_Manifest(False, False), _Manifest(False, True)]))))
        self.assertTrue(job.has_live_delete_files(_DanglingTable(_Snapshot([_Manifest(True, False)]))))

    def test_the_metadata_tables_are_scanned_only_when_a_delete_file_is_left(self):
        actions = mock.MagicMock()
        with mock.patch.object(job, "dangling_position_delete_files", return_value=0) as scan:
            out = job.remove_dangling_deletes(
                _DanglingSession(), actions, _DanglingTable(_Snapshot([])), self.NO_REWRITE, None, None
            )
            scan.assert_not_called()
            # The result is the one a scan finding nothing gives.
            self.assertEqual(
                out,
                {"removeDanglingDeleteFiles": {"removedDeleteFiles": 0, "danglingPositionDeleteFilesFound": 0, "ranIn": "spark"}},
            )
            actions.rewritePositionDeletes.assert_not_called()
            job.remove_dangling_deletes(
                _DanglingSession(), actions, _DanglingTable(_Snapshot([_Manifest(True, False)])), self.NO_REWRITE, None, None
            )
            scan.assert_called_once()

    def test_a_found_dangling_file_still_rewrites_all_position_deletes(self):
        actions = mock.MagicMock()
        params = {**MERGE["parameters"], "rewritePositionDeletes": False}
        with mock.patch.object(job, "dangling_position_delete_files", return_value=3):
            out = job.remove_dangling_deletes(
                _DanglingSession(), actions, _DanglingTable(_Snapshot([_Manifest(False, True)])), params, None, None
            )
        self.assertEqual(out["removeDanglingDeleteFiles"]["danglingPositionDeleteFilesFound"], 3)
        action = actions.rewritePositionDeletes.return_value
        self.assertIn(mock.call("rewrite-all", "true"), [c for c in _option_calls(action)])


class DanglingInDriverTest(unittest.TestCase):
    """A merge under the live-file bound judges and removes its dangling delete files in the
    driver, with no Spark job; at or over it, or on a table the driver does not judge, Spark's
    actions as before (docs/decisions/0054-dangling-deletes-in-the-driver.md)."""

    NO_REWRITE = {"rewritePositionDeletes": False}
    JUDGED = {"removedDeleteFiles": 1, "danglingPositionDeleteFilesFound": 2, "danglingDeleteFilesRemoved": 4}

    def test_the_driver_path_runs_no_spark_action(self):
        actions = mock.MagicMock()
        with mock.patch.object(job, "dangling_in_driver", return_value=dict(self.JUDGED)) as judge, mock.patch.object(
            job, "dangling_position_delete_files"
        ) as scan:
            out = job.remove_dangling_deletes(
                _DanglingSession(), actions, _DanglingTable(_Snapshot([_Manifest(True, False)])), self.NO_REWRITE, None, None, True
            )
        judge.assert_called_once()
        scan.assert_not_called()
        actions.removeDanglingDeleteFiles.assert_not_called()
        actions.rewritePositionDeletes.assert_not_called()
        self.assertEqual(out, {"removeDanglingDeleteFiles": {**self.JUDGED, "ranIn": "driver"}})

    def test_the_planner_s_position_delete_rewrite_still_runs_with_its_thresholds(self):
        actions = mock.MagicMock()
        params = {**MERGE["parameters"], "rewritePositionDeletes": True}
        with mock.patch.object(job, "dangling_in_driver", return_value=dict(self.JUDGED)):
            out = job.remove_dangling_deletes(
                _DanglingSession(), actions, _DanglingTable(_Snapshot([_Manifest(True, False)])), params, None, None, True
            )
        actions.removeDanglingDeleteFiles.assert_not_called()
        action = actions.rewritePositionDeletes.return_value
        self.assertNotIn(mock.call("rewrite-all", "true"), _option_calls(action))
        self.assertIn("rewritePositionDeleteFiles", out)
        self.assertEqual(out["removeDanglingDeleteFiles"]["ranIn"], "driver")

    def test_a_table_the_driver_does_not_judge_goes_to_spark(self):
        actions = mock.MagicMock()
        with mock.patch.object(job, "dangling_in_driver", return_value=None), mock.patch.object(
            job, "dangling_position_delete_files", return_value=0
        ):
            out = job.remove_dangling_deletes(
                _DanglingSession(), actions, _DanglingTable(_Snapshot([_Manifest(True, False)])), self.NO_REWRITE, None, None, True
            )
        actions.removeDanglingDeleteFiles.assert_called_once()
        self.assertEqual(out["removeDanglingDeleteFiles"]["ranIn"], "spark")

    def test_over_the_bound_the_driver_does_not_judge(self):
        actions = mock.MagicMock()
        with mock.patch.object(job, "dangling_in_driver") as judge, mock.patch.object(
            job, "dangling_position_delete_files", return_value=0
        ):
            job.remove_dangling_deletes(
                _DanglingSession(), actions, _DanglingTable(_Snapshot([])), self.NO_REWRITE, None, None, False
            )
        judge.assert_not_called()
        actions.removeDanglingDeleteFiles.assert_called_once()

    def test_format_v3_and_an_evolved_spec_are_left_to_spark(self):
        for version, specs in ((3, 1), (2, 2), (1, 1)):
            session = _DanglingSession()
            session.sparkContext._jvm.org.apache.iceberg.TableUtil.formatVersion.return_value = version
            table = mock.MagicMock()
            table.specs.return_value.size.return_value = specs
            self.assertIsNone(job.dangling_in_driver(session, table), (version, specs))
            table.newRewrite.assert_not_called()

    def _path_of(self, data_files: int, args) -> bool:
        rewrite = _run_with_live_files(job.parse_task(MERGE), args, data_files, "run_rewrite", {})
        (_, _, _, _, in_driver), _ = rewrite.call_args
        return in_driver

    def test_a_small_table_s_merge_judges_in_the_driver_and_a_large_one_with_spark(self):
        defaults = job.parse_args(["--task-json", "{}"])
        self.assertIsNone(defaults.driver_dangling_max_files)
        self.assertTrue(self._path_of(job.DRIVER_DANGLING_MAX_FILES - 2, defaults))
        self.assertFalse(self._path_of(job.DRIVER_DANGLING_MAX_FILES - 1, defaults))
        # A caller without the option (the bench's own Namespace) gets the default.
        self.assertTrue(self._path_of(12, mock.Mock(spec=["catalog_name", "max_concurrent_file_group_rewrites"], catalog_name="prod", max_concurrent_file_group_rewrites=None)))
        never = job.parse_args(["--task-json", "{}", "--driver-dangling-max-files", "0"])
        self.assertFalse(self._path_of(0, never))
        # The expiry's bound is its own.
        expiry_never = job.parse_args(["--task-json", "{}", "--driver-expiry-max-files", "0"])
        self.assertTrue(self._path_of(0, expiry_never))


class DanglingCountsTest(unittest.TestCase):
    """The driver's finds counted as Spark's two steps count them, so both paths report alike."""

    def test_partition_sequence_rule_first_then_file_scoped_deletes_of_removed_files(self):
        dangling = [
            # older than every live data file of its partition: RemoveDanglingDeleteFiles' find
            ("POSITION_DELETES", 3, "region=eu", "s3://w/eu/old.parquet"),
            # no live data file in its partition at all
            ("EQUALITY_DELETES", 7, "region=xx", None),
            # an equality delete as old as the partition's oldest data file applies to none
            ("EQUALITY_DELETES", 4, "region=ap", None),
            # as new as the rewrite's files (their starting sequence number), naming a removed file
            ("POSITION_DELETES", 4, "region=ap", "s3://w/ap/gone.parquet"),
            # partition-scoped (no single file named), not caught by the sequence rule
            ("POSITION_DELETES", 4, "region=ap", None),
        ]
        counts = job.dangling_counts(
            dangling, {"region=eu": 5, "region=ap": 4}, {"s3://w/eu/new.parquet", "s3://w/ap/new.parquet"}, True
        )
        self.assertEqual(
            counts, {"removedDeleteFiles": 3, "danglingPositionDeleteFilesFound": 1, "danglingDeleteFilesRemoved": 5}
        )

    def test_a_table_with_one_unpartitioned_spec_has_no_sequence_rule_finds(self):
        # Iceberg's action skips such a table: every find is the position-delete count's or neither.
        dangling = [("POSITION_DELETES", 2, "", "f1"), ("POSITION_DELETES", 2, "", "f2"), ("EQUALITY_DELETES", 1, "", None)]
        counts = job.dangling_counts(dangling, {"": 9}, {"f3"}, False)
        self.assertEqual(
            counts, {"removedDeleteFiles": 0, "danglingPositionDeleteFilesFound": 2, "danglingDeleteFilesRemoved": 3}
        )

    def test_nothing_dangling_counts_zero(self):
        self.assertEqual(
            job.dangling_counts([], {}, set(), True),
            {"removedDeleteFiles": 0, "danglingPositionDeleteFilesFound": 0, "danglingDeleteFilesRemoved": 0},
        )


def _option_calls(action):
    """Every `.option(key, value)` call down a fluent chain of MagicMock builders."""
    calls, current = [], action
    for _ in range(20):
        if not current.option.call_args_list:
            break
        calls.extend(current.option.call_args_list)
        current = current.option.return_value
    return calls


class SnapshotCountTest(unittest.TestCase):
    def test_counts_a_sized_list_with_one_call_and_any_iterable_by_walking(self):
        sized = mock.MagicMock()
        sized.snapshots.return_value = [1, 2, 3]
        self.assertEqual(job.snapshot_count(sized), 3)
        walked = mock.MagicMock()
        walked.snapshots.return_value = iter([1, 2])
        self.assertEqual(job.snapshot_count(walked), 2)


class TaskFiguresTest(unittest.TestCase):
    CLEANUP = {
        "id": "cleanup/prod/sales/orders",
        "type": "cleanup",
        "table": {"catalog": "prod", "namespace": ["sales"], "name": "orders"},
        "state": {"tableUuid": "6f9f3b4e-2d7c-4d7e-9b1a-0c8e5f1a2b3c"},
        "parameters": {"olderThan": "2026-12-01T00:00:00Z", "retainLast": 1},
    }

    def test_before_figures_are_read_from_the_metadata_just_loaded_and_after_figures_refreshed(self):
        table = mock.MagicMock()
        table.uuid.return_value = self.CLEANUP["state"]["tableUuid"]
        table.properties.return_value = {}
        table.snapshots.return_value = [1, 2]
        table.currentSnapshot.return_value = None
        reads = []
        table.refresh.side_effect = lambda: reads.append("refresh")
        table.currentSnapshot.side_effect = lambda: reads.append("figures")
        args = mock.MagicMock(catalog_name="prod", driver_expiry_max_files=None)
        with mock.patch.object(job, "load_table", return_value=table), mock.patch.object(
            job, "is_metadata_table", return_value=False
        ), mock.patch.object(job, "run_expire", return_value={"expireSnapshots": {}}), mock.patch.object(
            job, "run_cpu_seconds", return_value=None
        ), mock.patch.object(job, "run_memory", return_value=None), mock.patch.object(
            job, "task_jvm", return_value=_FakeTaskJvm()
        ):
            payload = job.run_in_session(mock.MagicMock(), args, self.CLEANUP, 0.0)
        self.assertTrue(payload["ok"])
        # One catalog load for the guard and the before figures, one refresh for the after.
        self.assertEqual(reads[:3], ["figures", "refresh", "figures"])
        self.assertEqual(reads.count("refresh"), 1)


def _run_with_live_files(task: dict, args, data_files: int, work: str, outcome: dict):
    """Runs `task` in a mocked session on a table whose before figures count `data_files` data
    files and 1 delete file; returns the mock standing in for the job's `work` function."""
    table = mock.MagicMock()
    table.uuid.return_value = task["state"]["tableUuid"]
    table.properties.return_value = {}
    figures = {"snapshotId": "1", "snapshots": 3, "dataFiles": data_files, "deleteFiles": 1}
    with mock.patch.object(job, "load_table", return_value=table), mock.patch.object(
        job, "is_metadata_table", return_value=False
    ), mock.patch.object(job, "table_figures", return_value=figures), mock.patch.object(
        job, work, return_value=outcome
    ) as worked, mock.patch.object(job, "commits_since", return_value=[]), mock.patch.object(
        job, "run_cpu_seconds", return_value=None
    ), mock.patch.object(job, "run_memory", return_value=None), mock.patch.object(
        job, "task_jvm", return_value=_FakeTaskJvm()
    ):
        job.run_in_session(mock.MagicMock(), args, task, 0.0)
    return worked


class _JavaMap:
    """Stands for a Java map handed to Python: crossing it entry by entry (a Py4J round trip
    each) fails the test; the session's TaskJvm takes it whole."""

    def __init__(self, values: dict[str, str]):
        self.values = values

    def __iter__(self):
        raise AssertionError("a Java map crossed Py4J entry by entry")

    keys = items = __iter__


class _FakeSnapshot:
    """A snapshot as the JVM holds it; `read` is what Iceberg's SnapshotParser writes of it."""

    def __init__(self, snapshot_id: int, parent: int | None, operation: str | None, summary: dict[str, str]):
        self.read = {"snapshot-id": snapshot_id, "sequence-number": 1, "timestamp-ms": 1, "manifest-list": "m"}
        if parent is not None:
            self.read["parent-snapshot-id"] = parent
        if operation is not None:  # Iceberg writes no summary for a snapshot without an operation
            self.read["summary"] = {"operation": operation, **summary}
        self.summary = lambda: _JavaMap(summary)


class _FakeTaskJvm:
    """The session's TaskJvm in JSON, as the JVM answers: `map_json` and `snapshot_json` write
    what Iceberg's mapper and SnapshotParser write; the ancestors walk is SnapshotUtil's."""

    def __init__(self):
        self.transfers = 0

    def map_json(self, values):
        self.transfers += 1
        return json.dumps(values.values if isinstance(values, _JavaMap) else dict(values))

    def snapshot_json(self, snapshot):
        self.transfers += 1
        return json.dumps(snapshot.read)

    def ancestors_between(self, table, latest: int, oldest: int | None):
        snapshot = table.snapshot(latest)
        while snapshot is not None and snapshot.read["snapshot-id"] != oldest:
            yield snapshot
            parent = snapshot.read.get("parent-snapshot-id")
            snapshot = None if parent is None else table.snapshot(parent)

    def new_list(self, iterable):
        return list(iterable)

    def snapshots_json(self, snapshots):
        self.transfers += 1
        return [json.loads(json.dumps(s.read)) for s in snapshots]


class _FiguresTable:
    """A table of `_FakeSnapshot`s whose properties and summaries are Java maps."""

    def __init__(self, task, snapshots: list[_FakeSnapshot], properties: dict[str, str]):
        self.by_id = {s.read["snapshot-id"]: s for s in snapshots}
        self.current = snapshots[-1]
        self._uuid, self._properties = task["state"]["tableUuid"], properties

    def uuid(self):
        return self._uuid

    def properties(self):
        return _JavaMap(self._properties)

    def snapshots(self):
        return list(self.by_id.values())

    def currentSnapshot(self):
        return self.current

    def snapshot(self, snapshot_id):
        return self.by_id.get(snapshot_id)

    def refresh(self):
        pass


class TaskJvmTest(unittest.TestCase):
    """A task's own reads — the guard's properties, the before and after figures, the commit
    totals — cross Py4J in a fixed few transfers, as JSON of Iceberg's own serializers, not a
    round trip per map entry, snapshot and getter (bench/results/task-cost-merge-rest-2026-12-04.md)."""

    REWRITE = {"deleted-data-files": "12", "added-data-files": "1", "removed-files-size": "900", "added-files-size": "800"}

    def _table(self, task, properties):
        totals = {"total-data-files": "12", "total-delete-files": "3", "total-files-size": "900", "total-records": "120"}
        after = {"total-data-files": "2", "total-delete-files": "0", "total-files-size": "850", "total-records": "125"}
        return _FiguresTable(
            task,
            [
                _FakeSnapshot(2**62 + 1, None, "append", {}),
                _FakeSnapshot(2**62 + 2, 2**62 + 1, "overwrite", totals),
                _FakeSnapshot(5, 2**62 + 2, "replace", {**self.REWRITE, **after}),
                _FakeSnapshot(2**62 + 4, 5, "append", {"added-data-files": "1", "added-files-size": "50", **after}),
            ],
            properties,
        )

    def test_properties_figures_and_commit_totals_are_read_from_json_transfers(self):
        task = {**MERGE, "parameters": {**MERGE["parameters"], "partitionFilter": []}}
        # A property value with the characters a joined transfer or a Python literal would trip on.
        odd = "a'b\"c\nd\x1fe=f, g}{ é"
        table = self._table(task, {"icepack.enabled": "true", "icepack.note": odd})
        before = table.current = table.by_id[2**62 + 2]
        tj = _FakeTaskJvm()

        def merge(*_args):
            table.current = table.by_id[2**62 + 4]  # the job's replace, then a writer's append
            return {"rewriteDataFiles": {}}

        guarded = []
        with mock.patch.object(job, "load_table", return_value=table), mock.patch.object(
            job, "is_metadata_table", return_value=False
        ), mock.patch.object(job, "task_jvm", return_value=tj), mock.patch.object(
            job, "run_rewrite", side_effect=merge
        ), mock.patch.object(job, "run_cpu_seconds", return_value=None), mock.patch.object(
            job, "run_memory", return_value=None
        ), mock.patch.object(job, "guard_table", side_effect=lambda *a: guarded.append(a[3]) or {}):
            args = mock.Mock(catalog_name="prod", driver_dangling_max_files=None, max_concurrent_file_group_rewrites=None)
            payload = job.run_in_session(mock.MagicMock(), args, task, 0.0)
        self.assertEqual(guarded, [{"icepack.enabled": "true", "icepack.note": odd}])
        self.assertEqual(
            payload["before"],
            {"snapshotId": str(before.read["snapshot-id"]), "snapshots": 4, "dataFiles": 12, "deleteFiles": 3, "bytes": 900, "records": 120},
        )
        self.assertEqual(
            payload["after"],
            {"snapshotId": str(2**62 + 4), "snapshots": 4, "dataFiles": 2, "deleteFiles": 0, "bytes": 850, "records": 125},
        )
        # Only the job's own replace counts, not the writer's append after it.
        self.assertEqual(payload["commits"], job.commit_totals([("replace", self.REWRITE)]))
        # Properties, the two figures' snapshots, the commits since: one transfer each.
        self.assertEqual(tj.transfers, 4)

    def test_a_snapshot_reads_as_its_id_operation_and_summary(self):
        self.assertEqual(job.snapshot_summary(None), (None, None, {}))
        read = _FakeSnapshot(2**63 - 1, 7, "replace", {"added-data-files": "1"}).read
        self.assertEqual(job.snapshot_summary(read), (str(2**63 - 1), "replace", {"added-data-files": "1"}))
        # Iceberg writes no summary for a snapshot without an operation.
        self.assertEqual(job.snapshot_summary(_FakeSnapshot(3, None, None, {"x": "1"}).read), ("3", None, {}))

    def test_the_commits_since_are_the_after_snapshot_and_its_ancestors_back_to_before(self):
        table = self._table(MERGE, {})
        tj = _FakeTaskJvm()
        since = job.commits_since(tj, table, str(2**62 + 4), str(2**62 + 2))
        self.assertEqual([op for op, _ in since], ["append", "replace"])
        self.assertEqual(since[1][1], {**self.REWRITE, **{k: v for k, v in since[1][1].items() if k.startswith("total-")}})
        # No before snapshot (an empty table): the whole history; none after or the same: none.
        self.assertEqual(len(job.commits_since(tj, table, str(2**62 + 4), None)), 4)
        self.assertEqual(job.commits_since(tj, table, None, None), [])
        self.assertEqual(job.commits_since(tj, table, "5", "5"), [])
        # A before snapshot that is no ancestor (the table rolled back past it): back to the root.
        self.assertEqual(len(job.commits_since(tj, table, "5", "999")), 3)

    def test_the_lookups_are_made_once_per_session(self):
        first, second = mock.MagicMock(), mock.MagicMock()
        with mock.patch.object(job, "TaskJvm", side_effect=lambda jvm: mock.Mock(jvm=jvm)) as made, mock.patch.object(
            job, "_SESSION_JVM", []
        ):
            self.assertIs(job.task_jvm(first), job.task_jvm(first))
            self.assertIs(job.task_jvm(second).jvm, second)
        self.assertEqual(made.call_args_list, [mock.call(first), mock.call(second)])

    def test_the_memory_probe_in_local_mode_reads_no_spark_conf(self):
        spark = mock.MagicMock()
        spark.sparkContext.master = "local[2]"
        spark.sparkContext.defaultParallelism = 2
        with mock.patch.object(job, "jvm_peak_heap", return_value=(5, 9)):
            self.assertEqual(job.run_memory(spark), {"peakHeapBytes": 5, "heapBytes": 9, "cores": 2})
        # A copy of the whole conf crosses Py4J an entry per round trip: read only on a cluster.
        spark.sparkContext.getConf.assert_not_called()


class ExpiryPathTest(unittest.TestCase):
    """A cleanup expires in the driver under the live-file bound, with Spark's action at or over
    it (docs/decisions/0051-driver-side-expiry-for-small-tables.md)."""

    CLEANUP = TaskFiguresTest.CLEANUP

    def test_the_bound_counts_data_and_delete_files(self):
        self.assertTrue(job.runs_in_driver({"dataFiles": 5, "deleteFiles": 4}, 10))
        self.assertFalse(job.runs_in_driver({"dataFiles": 6, "deleteFiles": 4}, 10))
        self.assertFalse(job.runs_in_driver({"dataFiles": 0, "deleteFiles": 0}, 0))

    def _path_of(self, data_files: int, args) -> bool:
        expire = _run_with_live_files(self.CLEANUP, args, data_files, "run_expire", {"expireSnapshots": {}})
        (_, _, allowed, in_driver), _ = expire.call_args
        # The guard's retention either way, never the task's alone.
        self.assertEqual(set(allowed), {"olderThanMs", "retainLast"})
        return in_driver

    def test_a_small_table_expires_in_the_driver_and_a_large_one_with_spark(self):
        defaults = job.parse_args(["--task-json", "{}"])
        self.assertIsNone(defaults.driver_expiry_max_files)
        self.assertTrue(self._path_of(job.DRIVER_EXPIRY_MAX_FILES - 2, defaults))
        self.assertFalse(self._path_of(job.DRIVER_EXPIRY_MAX_FILES - 1, defaults))
        # A caller without the option (the bench's own Namespace) gets the default.
        self.assertTrue(self._path_of(12, mock.Mock(spec=["catalog_name"], catalog_name="prod")))
        never = job.parse_args(["--task-json", "{}", "--driver-expiry-max-files", "0"])
        self.assertFalse(self._path_of(0, never))

    def test_deleted_paths_are_counted_by_kind(self):
        counts = job.classify_deleted(
            ["snap-1.avro", "snap-1.avro", "m1.avro", "stats.puffin"]
            + ["pos.parquet", "eq.parquet", "data.parquet", "dv.puffin"],
            manifest_lists={"snap-1.avro", "snap-2.avro"},
            statistics_files={"stats.puffin"},
            manifests={"m1.avro", "m2.avro"},
            delete_files={
                "pos.parquet": "POSITION_DELETES",
                "eq.parquet": "EQUALITY_DELETES",
                "dv.puffin": "POSITION_DELETES",
            },
        )
        self.assertEqual(
            counts,
            {
                "deletedDataFiles": 1,
                "deletedPositionDeleteFiles": 2,
                "deletedEqualityDeleteFiles": 1,
                "deletedManifests": 1,
                "deletedManifestLists": 1,
                "deletedStatisticsFiles": 1,
            },
        )

    def test_the_driver_result_has_the_actions_keys_and_says_where_it_ran(self):
        counts = dict.fromkeys(job.EXPIRY_KINDS, 2)
        allowed = {"olderThanMs": 5, "retainLast": 3}
        spark = mock.MagicMock()
        with mock.patch.object(job, "expire_in_driver", return_value=counts) as driver:
            out = job.run_expire(spark, "table", allowed, in_driver=True)
        driver.assert_called_once_with(spark, "table", allowed)
        self.assertEqual(out, {"expireSnapshots": {**counts, "ranIn": "driver"}})
        spark.sparkContext._jvm.org.apache.iceberg.spark.actions.SparkActions.get.assert_not_called()

    def test_without_iceberg_reachable_cleanup_the_spark_action_runs(self):
        spark = mock.MagicMock()
        action = spark.sparkContext._jvm.org.apache.iceberg.spark.actions.SparkActions.get.return_value
        expire = action.expireSnapshots.return_value
        result = expire.expireOlderThan.return_value.retainLast.return_value.execute.return_value
        result.deletedDataFilesCount.return_value = 7
        with mock.patch.object(job, "expire_in_driver", return_value=None):
            out = job.run_expire(spark, "table", {"olderThanMs": 5, "retainLast": 3}, in_driver=True)
        expire.expireOlderThan.assert_called_once_with(5)
        expire.expireOlderThan.return_value.retainLast.assert_called_once_with(3)
        self.assertEqual(out["expireSnapshots"]["deletedDataFiles"], 7)
        self.assertEqual(out["expireSnapshots"]["ranIn"], "spark")
        self.assertEqual(set(out["expireSnapshots"]) - {"ranIn"}, set(job.EXPIRY_KINDS))


class DeletedNowTest(unittest.TestCase):
    """The driver's deletes after an expiry: bulk where the FileIO can; a failure is not counted."""

    class JavaError(Exception):
        java_exception = "boom"

    def _py4j(self, bulk: bool):
        gateway = mock.MagicMock(is_instance_of=mock.Mock(return_value=bulk))
        protocol = mock.MagicMock(Py4JJavaError=self.JavaError)
        modules = {"py4j": mock.MagicMock(), "py4j.java_gateway": gateway, "py4j.protocol": protocol}
        return mock.patch.dict(sys.modules, modules)

    def test_bulk_delete_counts_every_path(self):
        fileio = mock.MagicMock()
        with self._py4j(bulk=True):
            gone = job.deleted_now(mock.MagicMock(), fileio, "java-list", ["a", "b"])
        fileio.deleteFiles.assert_called_once_with("java-list")
        fileio.deleteFile.assert_not_called()
        self.assertEqual(gone, ["a", "b"])

    def test_a_failed_bulk_delete_is_retried_one_by_one_and_failures_not_counted(self):
        fileio = mock.MagicMock()
        fileio.deleteFiles.side_effect = self.JavaError()
        fileio.deleteFile.side_effect = lambda path: (_ for _ in ()).throw(self.JavaError()) if path == "b" else None
        err = io.StringIO()
        with self._py4j(bulk=True), redirect_stderr(err):
            gone = job.deleted_now(mock.MagicMock(), fileio, "java-list", ["a", "b", "c"])
        self.assertEqual(gone, ["a", "c"])
        self.assertIn("cannot delete b", err.getvalue())

    def test_a_fileio_without_bulk_deletes_one_by_one(self):
        fileio = mock.MagicMock()
        with self._py4j(bulk=False):
            gone = job.deleted_now(mock.MagicMock(), fileio, "java-list", ["a", "b"])
        fileio.deleteFiles.assert_not_called()
        self.assertEqual([c.args[0] for c in fileio.deleteFile.call_args_list], ["a", "b"])
        self.assertEqual(gone, ["a", "b"])


class _JavaStrings:
    """A Java list of strings as Py4J shows it: size() and iterator()."""

    def __init__(self, values: list[str]) -> None:
        self.values = values

    def size(self) -> int:
        return len(self.values)

    def iterator(self):
        values = iter(self.values)
        box: list = []

        class It:
            def hasNext(self) -> bool:
                if not box:
                    box.append(next(values, StopIteration))
                return box[0] is not StopIteration

            def next(self):
                return box.pop()

        return It()


class ExpiryTransferTest(unittest.TestCase):
    """The expiry's count reads snapshots, manifests and delete files through joined transfers
    made in the JVM, with its handles looked up once per session (decision 0051, amended)."""

    def _functions(self):
        jvm = mock.MagicMock()
        jvm.java.lang.String.join.side_effect = lambda separator, values: separator.join(values.values)
        return job._JvmFunctions(jvm), jvm

    def test_a_transfer_splits_into_its_values_or_says_it_cannot(self):
        sep = job._UNIT_SEPARATOR
        self.assertEqual(job.split_transfer(f"a{sep}b{sep}", 3), ["a", "b", ""])
        self.assertIsNone(job.split_transfer(f"a{sep}b{sep}c", 2))

    def test_strings_cross_in_one_join(self):
        f, jvm = self._functions()
        self.assertEqual(f.strings(_JavaStrings(["s3://w/a.parquet", "s3://w/b.avro"])), ["s3://w/a.parquet", "s3://w/b.avro"])
        self.assertEqual(jvm.java.lang.String.join.call_count, 1)
        self.assertEqual(f.strings(_JavaStrings([])), [])
        self.assertEqual(jvm.java.lang.String.join.call_count, 1)

    def test_a_value_holding_the_separator_is_refused_or_read_one_by_one(self):
        f, _ = self._functions()
        odd = ["a" + job._UNIT_SEPARATOR + "b", "c"]
        with self.assertRaises(ValueError):
            f.strings(_JavaStrings(odd))
        # After a commit the deleted paths must be read whatever they hold.
        self.assertEqual(f.strings_exact(_JavaStrings(odd)), odd)

    class JavaError(Exception):
        java_exception = "NoSuchMethodException: manifestListLocation"

    def test_the_handles_are_looked_up_once_per_session(self):
        first, second = mock.MagicMock(), mock.MagicMock()
        # py4j stubbed as the neighbouring tests do: the pure-parts suite runs without Spark's venv.
        protocol = mock.MagicMock(Py4JJavaError=self.JavaError)
        with mock.patch.dict(sys.modules, {"py4j": mock.MagicMock(), "py4j.protocol": protocol}), mock.patch.object(
            job, "IcebergJvm", side_effect=lambda jvm: mock.MagicMock(jvm=jvm)
        ) as made, mock.patch.object(job, "_SESSION_JVM", []):
            x = job.iceberg_jvm(first, "dangling")
            self.assertIs(x.jvm, first)
            self.assertIs(job.iceberg_jvm(first, "expiry"), x)
            self.assertIs(job.iceberg_jvm(first, "expiry"), x)
            self.assertIs(job.iceberg_jvm(second, "expiry").jvm, second)  # a new session's JVM
        self.assertEqual(made.call_count, 2)
        # Each use's own getters: `load` looks them up once (IcebergJvm.load keeps what it loaded).
        self.assertEqual([c.args for c in x.load.call_args_list], [("dangling",), ("expiry",), ("expiry",)])

    def test_each_use_loads_its_own_getters_once(self):
        x = job.IcebergJvm.__new__(job.IcebergJvm)
        x.loaded = set()
        with mock.patch.object(job.IcebergJvm, "_dangling") as dangling, mock.patch.object(job.IcebergJvm, "_expiry") as expiry:
            x.load("dangling")
            x.load("dangling")
            dangling.assert_called_once()
            expiry.assert_not_called()  # a session that only merges does not look them up
            x.load("expiry")
            x.load("expiry")
            expiry.assert_called_once()

    def test_a_use_whose_getter_is_missing_is_looked_up_again_next_time(self):
        protocol = mock.MagicMock(Py4JJavaError=self.JavaError)
        x = mock.MagicMock()
        x.load.side_effect = [self.JavaError(), None]
        err = io.StringIO()
        jvm = mock.MagicMock()
        with mock.patch.dict(sys.modules, {"py4j": mock.MagicMock(), "py4j.protocol": protocol}), mock.patch.object(
            job, "IcebergJvm", return_value=x
        ), mock.patch.object(job, "_SESSION_JVM", []), redirect_stderr(err):
            self.assertIsNone(job.iceberg_jvm(jvm, "dangling"))
            self.assertIs(job.iceberg_jvm(jvm, "dangling"), x)
        self.assertEqual(x.load.call_count, 2)
        self.assertEqual(err.getvalue().count("dangling delete files not judged in the driver"), 1)

    def test_an_iceberg_without_a_getter_leaves_the_expiry_to_the_action(self):
        protocol = mock.MagicMock(Py4JJavaError=self.JavaError)
        err = io.StringIO()
        with mock.patch.dict(sys.modules, {"py4j": mock.MagicMock(), "py4j.protocol": protocol}), mock.patch.object(
            job, "IcebergJvm", side_effect=self.JavaError()
        ), mock.patch.object(job, "_SESSION_JVM", []), redirect_stderr(err):
            self.assertIsNone(job.iceberg_jvm(mock.MagicMock(), "expiry"))
            spark = mock.MagicMock()
            self.assertIsNone(job.expire_in_driver(spark, mock.MagicMock(), {"olderThanMs": 5, "retainLast": 1}))
        self.assertIn("expiry not counted in the driver: NoSuchMethodException: manifestListLocation", err.getvalue())

    def _py4j(self):
        protocol = mock.MagicMock(Py4JJavaError=self.JavaError)
        return mock.patch.dict(sys.modules, {"py4j": mock.MagicMock(), "py4j.protocol": protocol, "py4j.java_gateway": mock.MagicMock()})

    def test_the_dangling_judgement_and_the_expiry_share_the_session_s_lookup(self):
        spark = _DanglingSession()
        table = mock.MagicMock()
        table.specs.return_value.size.return_value = 1
        x = mock.MagicMock(incremental_cleanup=None)
        # No delete manifest with a live entry: judged, nothing to remove.
        listed = table.currentSnapshot.return_value.deleteManifests.return_value
        listed.isEmpty.return_value = False
        manifests = listed.stream.return_value
        manifests.filter.return_value.collect.return_value.size.return_value = 0
        with self._py4j(), mock.patch.object(job, "IcebergJvm", return_value=x) as made, mock.patch.object(
            job, "_SESSION_JVM", []
        ), mock.patch.object(job, "reachable_cleanup", return_value=None):
            self.assertEqual(job.dangling_in_driver(spark, table), job.dangling_counts([], {}, set(), False))
            self.assertIsNone(job.expire_in_driver(spark, mock.MagicMock(), {"olderThanMs": 5, "retainLast": 1}))
            self.assertEqual(job.dangling_in_driver(spark, table)["danglingDeleteFilesRemoved"], 0)
        made.assert_called_once_with(spark.sparkContext._jvm)
        manifests.filter.assert_called_with(x.has_live_entries)  # the manifests with a live entry
        table.newRewrite.assert_not_called()

    def test_an_iceberg_without_a_getter_leaves_dangling_deletes_to_spark_when_there_are_some(self):
        spark = _DanglingSession()
        # Delete manifests with a live entry, without, none at all (no lookup then).
        for manifests, expected, looked in (
            ([_Manifest(False, True)], None, True),
            ([_Manifest(False, False)], 0, True),
            ([], 0, False),
        ):
            table = _DanglingTable(_Snapshot(manifests))
            table.specs = lambda: mock.Mock(**{"size.return_value": 1})
            err = io.StringIO()
            with self._py4j(), mock.patch.object(
                job, "IcebergJvm", side_effect=self.JavaError()
            ) as made, mock.patch.object(job, "_SESSION_JVM", []), redirect_stderr(err):
                out = job.dangling_in_driver(spark, table)
            self.assertEqual(None if out is None else out["danglingDeleteFilesRemoved"], expected)
            self.assertEqual(made.called, looked)
            self.assertEqual("dangling delete files not judged in the driver: NoSuchMethodException" in err.getvalue(), looked)

    def test_reachable_cleanup_is_looked_up_on_the_session_s_first_cleanup_only(self):
        spark = mock.MagicMock()
        x = mock.MagicMock(incremental_cleanup=None)
        first, second = mock.MagicMock(), mock.MagicMock()
        method = first.getClass.return_value.getDeclaredMethod.return_value
        with self._py4j():
            self.assertIs(job.reachable_cleanup(spark, x, first), first)
            self.assertIs(job.reachable_cleanup(spark, x, second), second)
        first.getClass.return_value.getDeclaredMethod.assert_called_once()
        self.assertEqual(first.getClass.return_value.getDeclaredMethod.call_args.args[0], "withIncrementalCleanup")
        method.setAccessible.assert_called_once_with(True)
        second.getClass.assert_not_called()
        values = spark.sparkContext._gateway.new_array.return_value
        self.assertEqual(method.invoke.call_args_list, [mock.call(first, values), mock.call(second, values)])

    def test_without_reachable_cleanup_each_cleanup_logs_it_and_looks_again(self):
        spark = mock.MagicMock()
        x = mock.MagicMock(incremental_cleanup=None)
        expire = mock.MagicMock()
        expire.getClass.return_value.getDeclaredMethod.side_effect = self.JavaError()
        err = io.StringIO()
        with self._py4j(), redirect_stderr(err):
            self.assertIsNone(job.reachable_cleanup(spark, x, expire))
            self.assertIsNone(job.reachable_cleanup(spark, x, expire))
        self.assertIsNone(x.incremental_cleanup)
        self.assertEqual(expire.getClass.return_value.getDeclaredMethod.call_count, 2)
        self.assertEqual(err.getvalue().count("reachable cleanup cannot be chosen"), 2)


if __name__ == "__main__":
    unittest.main()
