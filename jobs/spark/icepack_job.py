"""Icepack's Spark maintenance job: one task in, Iceberg maintenance out, one JSON line out.

    spark-submit icepack_job.py --task task.json --catalog-name prod --catalog-uri http://… \
        [--warehouse …] [--max-concurrent-file-group-rewrites N] [--driver-expiry-max-files N]
        [--result-file out.json]

The task is the BullMQ job data (`packages/types` `Task`): `--task FILE`, `--task -` (stdin)
or `--task-json TEXT`. Catalog secrets come only from the environment (ICEPACK_CATALOG_TOKEN,
ICEPACK_CATALOG_CREDENTIAL, or their *_FILE variants) and are never printed.

No value of the task is ever spliced into SQL: the table is loaded through Spark's catalog API
with a structured `Identifier`, and the work runs through Iceberg's Java actions (the same code
the `system.rewrite_data_files` / `rewrite_position_delete_files` / `expire_snapshots`
procedures call), with sort orders and partition filters built as Iceberg objects.

The job trusts the task only as a request: it reloads the table by catalog and Iceberg
`TableIdentifier` (never Spark's name resolution, which turns `ns.t.branch_x`, `tag_*`,
`snapshot_id_*`, `at_timestamp_*`, `changes`, `rewrite` into views of another table), checks the
task's table UUID, honours the table's own `icepack.enabled`, type switches and `gc.enabled`,
and expires no more than the table's own retention allows (`guard_table`).

Exit codes (see docs/spark-job.md): 0 ok, 1 other failure, 2 bad input, 3 table not found,
4 commit conflict (retryable), 5 transient I/O (retryable), 6 refused by the table's own state.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import time
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from typing import Any


class ExitCode:
    OK = 0
    FAILED = 1
    BAD_INPUT = 2
    TABLE_NOT_FOUND = 3
    COMMIT_CONFLICT = 4
    TRANSIENT_IO = 5
    REFUSED = 6
    OUT_OF_MEMORY = 7


# Error kinds as the dispatcher's task events name them, with their exit code and retryability.
ERROR_KINDS: dict[str, tuple[int, bool]] = {
    "failed": (ExitCode.FAILED, False),
    "bad-input": (ExitCode.BAD_INPUT, False),
    "table-not-found": (ExitCode.TABLE_NOT_FOUND, False),
    "commit-conflict": (ExitCode.COMMIT_CONFLICT, True),
    "io": (ExitCode.TRANSIENT_IO, True),
    "refused": (ExitCode.REFUSED, False),
    # Retryable: the dispatcher gives the next attempt more memory (ADR 0026), within the group.
    "out-of-memory": (ExitCode.OUT_OF_MEMORY, True),
}

TASK_TYPES = ("cleanup", "merge", "sort", "orphans")
SORT_STRATEGIES = ("sort", "zorder", "hilbert")
SECRET_PROPERTIES = {"ICEPACK_CATALOG_TOKEN": "token", "ICEPACK_CATALOG_CREDENTIAL": "credential"}
MAX_MESSAGE_CHARS = 2_000


class JobError(Exception):
    """A failure with a kind from ERROR_KINDS; its message ends up in the task event."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class BadInput(JobError):
    def __init__(self, message: str) -> None:
        super().__init__("bad-input", message)


class Refused(JobError):
    """The table itself says no: another table under the name, paused, GC off, a metadata table."""

    def __init__(self, message: str) -> None:
        super().__init__("refused", message)


# ---------------------------------------------------------------------------------------------
# Pure parts (no Spark): reading and checking the task, options, error classification.


def _require(obj: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if key not in obj:
        raise BadInput(f"{where}.{key} is required")
    value = obj[key]
    # bool is an int in Python: never accept it where a number is meant.
    if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        raise BadInput(f"{where}.{key} has the wrong type")
    if not isinstance(value, kind):
        raise BadInput(f"{where}.{key} has the wrong type")
    return value


def _positive_int(obj: dict[str, Any], key: str, where: str, minimum: int = 1) -> int:
    value = _require(obj, key, int, where)
    if value < minimum:
        raise BadInput(f"{where}.{key} must be at least {minimum}")
    return value


_TRANSFORM = re.compile(r"identity|year|month|day|hour|(bucket|truncate)\[([1-9][0-9]*)\]")


def _check_predicate(predicate: Any, p: str) -> None:
    if not isinstance(predicate, dict):
        raise BadInput(f"{p} must be an object")
    if not _require(predicate, "column", str, p):
        raise BadInput(f"{p}.column must not be empty")
    transform = predicate.get("transform", "identity")
    if not isinstance(transform, str) or _TRANSFORM.fullmatch(transform) is None:
        raise BadInput(f"{p}.transform must be identity, year, month, day, hour, bucket[N] or truncate[N]")
    if "value" not in predicate or not isinstance(predicate["value"], (str, int, float, bool, type(None))):
        raise BadInput(f"{p}.value must be a string, number, boolean or null")


# Iceberg type ids whose partition values the scanner renders as numbers or booleans; the others
# (date, time, timestamp, string, decimal, uuid) are text that Iceberg's string literal converts.
_INTEGER_TYPES = ("INTEGER", "LONG")
_FLOAT_TYPES = ("FLOAT", "DOUBLE")
_TEXT_TYPES = ("STRING", "DATE", "TIME", "TIMESTAMP", "TIMESTAMP_NANO", "DECIMAL", "UUID")


def predicate_value(transform: str, source_type: str, value: Any, where: str) -> Any:
    """The literal for `transform(column) = value`, given the source column's Iceberg type id.

    The planner sends partition values as the scanner renders them: `day` as a date
    (`2026-01-02`), `year`/`month`/`hour`/`bucket` as their integer, `identity`/`truncate` in the
    source column's type (numbers and booleans as text)."""
    if value is None:
        return None
    if transform == "day":
        return str(value)
    result_type = "INTEGER" if transform in ("year", "month", "hour") or transform.startswith("bucket") else source_type
    try:
        if result_type in _INTEGER_TYPES:
            return int(value)
        if result_type in _FLOAT_TYPES:
            return float(value)
        if result_type == "BOOLEAN":
            if isinstance(value, bool):
                return value
            if str(value).lower() in ("true", "false"):
                return str(value).lower() == "true"
            raise ValueError(value)
    except ValueError:
        raise BadInput(f"{where}.value {value!r} is not of type {result_type.lower()}") from None
    if result_type in _TEXT_TYPES:
        return str(value)
    raise BadInput(f"{where}: partition values of type {result_type.lower()} cannot be filtered")


def partition_sets(params: dict[str, Any], where: str = "task.parameters") -> list[tuple[str, list[dict[str, Any]]]]:
    """The partitions of `partitionSets` (the planner's compact form, ADR 0034), each as `partitions`
    lists one: row k of a set is the AND of `fields[j]` = `values[k][j]`. With the path its errors name.
    Raises BadInput naming the field."""
    sets = params.get("partitionSets")
    if sets is None:
        return []
    if not isinstance(sets, list) or not sets:
        raise BadInput(f"{where}.partitionSets must be a non-empty list")
    out = []
    for i, one in enumerate(sets):
        p = f"{where}.partitionSets[{i}]"
        if not isinstance(one, dict):
            raise BadInput(f"{p} must be an object")
        fields = _require(one, "fields", list, p)
        values = _require(one, "values", list, p)
        if not fields:
            raise BadInput(f"{p}.fields must not be empty")
        if not values:
            raise BadInput(f"{p}.values must not be empty")
        for j, field in enumerate(fields):
            if not isinstance(field, dict):
                raise BadInput(f"{p}.fields[{j}] must be an object")
            _check_predicate({**field, "value": None}, f"{p}.fields[{j}]")
        for k, row in enumerate(values):
            if not isinstance(row, list) or len(row) != len(fields):
                raise BadInput(f"{p}.values[{k}] must list {len(fields)} values, one per field")
            predicates = []
            for j, (field, value) in enumerate(zip(fields, row)):
                if not isinstance(value, (str, int, float, bool, type(None))):
                    raise BadInput(f"{p}.values[{k}][{j}] must be a string, number, boolean or null")
                predicates.append({**field, "value": value})
            out.append((f"{p}.values[{k}]", predicates))
    return out


def parse_task(value: Any) -> dict[str, Any]:
    """Checks the fields this job uses; returns the task. Raises BadInput naming the field."""
    if not isinstance(value, dict):
        raise BadInput("task must be a JSON object")
    task_type = _require(value, "type", str, "task")
    if task_type not in TASK_TYPES:
        raise BadInput(f"task.type must be one of {', '.join(TASK_TYPES)}")
    _require(value, "id", str, "task")
    table = _require(value, "table", dict, "task")
    _require(table, "catalog", str, "task.table")
    namespace = _require(table, "namespace", list, "task.table")
    if not namespace or not all(isinstance(p, str) and p for p in namespace):
        raise BadInput("task.table.namespace must be a non-empty list of non-empty strings")
    if not _require(table, "name", str, "task.table"):
        raise BadInput("task.table.name must not be empty")
    state = _require(value, "state", dict, "task")
    if not _require(state, "tableUuid", str, "task.state"):
        raise BadInput("task.state.tableUuid must not be empty")
    params = _require(value, "parameters", dict, "task")
    where = "task.parameters"
    if task_type == "cleanup":
        parse_instant_ms(_require(params, "olderThan", str, where), f"{where}.olderThan")
        _positive_int(params, "retainLast", where)
        return value
    if task_type == "orphans":
        parse_instant_ms(_require(params, "olderThan", str, where), f"{where}.olderThan")
        _positive_int(params, "quarantineWindowMs", where, minimum=0)
        _positive_int(params, "maxFiles", where)
        return value
    for key in ("targetFileSizeBytes", "maxFileSizeBytes", "minInputFiles", "deleteFileThreshold"):
        _positive_int(params, key, where)
    _positive_int(params, "minFileSizeBytes", where, minimum=0)
    _require(params, "rewritePositionDeletes", bool, where)
    progress = params.get("partialProgress")
    if progress is not None:
        if not isinstance(progress, dict):
            raise BadInput(f"{where}.partialProgress must be an object")
        _require(progress, "enabled", bool, f"{where}.partialProgress")
        if "maxCommits" in progress:
            _positive_int(progress, "maxCommits", f"{where}.partialProgress")
    for i, predicate in enumerate(params.get("partitionFilter") or []):
        _check_predicate(predicate, f"{where}.partitionFilter[{i}]")
    partitions = params.get("partitions")
    if partitions is not None:
        if not isinstance(partitions, list) or not partitions:
            raise BadInput(f"{where}.partitions must be a non-empty list")
        for i, partition in enumerate(partitions):
            if not isinstance(partition, list) or not partition:
                raise BadInput(f"{where}.partitions[{i}] must be a non-empty list of predicates")
            for j, predicate in enumerate(partition):
                _check_predicate(predicate, f"{where}.partitions[{i}][{j}]")
    partition_sets(params, where)
    if task_type == "sort":
        strategy = _require(params, "strategy", str, where)
        if strategy not in SORT_STRATEGIES:
            raise BadInput(f"{where}.strategy must be sort, zorder or hilbert")
        columns = _require(params, "columns", list, where)
        if not columns:
            raise BadInput(f"{where}.columns must not be empty")
        for i, column in enumerate(columns):
            c = f"{where}.columns[{i}]"
            if not isinstance(column, dict) or not isinstance(column.get("name"), str) or not column["name"]:
                raise BadInput(f"{c}.name is required")
            if column.get("direction", "asc") not in ("asc", "desc"):
                raise BadInput(f"{c}.direction must be asc or desc")
            if column.get("nullOrder", "nulls-first") not in ("nulls-first", "nulls-last"):
                raise BadInput(f"{c}.nullOrder must be nulls-first or nulls-last")
        if strategy == "hilbert" and len(columns) != HILBERT_DIMENSIONS:
            raise BadInput(f"{where}.columns must name exactly {HILBERT_DIMENSIONS} columns for hilbert")
    return value


# The task's date-times are RFC 3339 as `packages/types` checks them (zod `iso.datetime` with
# offsets): seconds required, any fraction, `Z` or `±HH:MM`. Parsed here rather than with
# `datetime.fromisoformat`, which rejects `Z` and fractions other than 3 or 6 digits before
# Python 3.11 (the job image's Python is 3.10).
_INSTANT = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})?"
)


def parse_instant_ms(text: str, where: str) -> int:
    """Milliseconds since the epoch of an RFC 3339 date-time with a zone (sub-ms truncated)."""
    match = _INSTANT.fullmatch(text)
    if match is None:
        raise BadInput(f"{where} is not an ISO-8601 date-time (YYYY-MM-DDTHH:MM:SS[.f]Z or ±HH:MM): {text!r}")
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    if zone is None:
        raise BadInput(f"{where} needs a time zone (Z or an offset)")
    if zone == "Z":
        offset = timedelta(0)
    else:
        sign = -1 if zone[0] == "-" else 1
        offset = sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
    try:
        instant = datetime(
            int(year), int(month), int(day), int(hour), int(minute), int(second),
            tzinfo=timezone(offset),
        )
    except ValueError as error:
        raise BadInput(f"{where} is not a valid date-time: {error}") from None
    millis = int((fraction or "0")[:3].ljust(3, "0"))
    return int(instant.timestamp()) * 1000 + millis


def format_instant_ms(millis: int) -> str:
    """RFC 3339 UTC with milliseconds, as the planner writes instants."""
    instant = datetime.fromtimestamp(millis // 1000, tz=timezone.utc)
    return instant.strftime("%Y-%m-%dT%H:%M:%S") + f".{millis % 1000:03d}Z"


def rewrite_options(params: dict[str, Any], max_concurrent_groups: int | None) -> dict[str, str]:
    """The `rewrite_data_files` options of a merge/sort task (Iceberg's option names)."""
    options = {
        "target-file-size-bytes": str(params["targetFileSizeBytes"]),
        "min-file-size-bytes": str(params["minFileSizeBytes"]),
        "max-file-size-bytes": str(params["maxFileSizeBytes"]),
        "min-input-files": str(params["minInputFiles"]),
        "delete-file-threshold": str(params["deleteFileThreshold"]),
    }
    progress = params.get("partialProgress")
    if progress is not None:
        options["partial-progress.enabled"] = "true" if progress["enabled"] else "false"
        if progress["enabled"] and "maxCommits" in progress:
            options["partial-progress.max-commits"] = str(progress["maxCommits"])
    if max_concurrent_groups is not None:
        options["max-concurrent-file-group-rewrites"] = str(max_concurrent_groups)
    return options


# The table's own policy, read from its properties by the same rules as the planner's
# (packages/policy/src/policy-keys.ts and policy.ts; a unit test keeps the keys equal).
# Catalog-wide settings are not seen here: they reach the planner over Kafka, which the job
# does not trust (docs/decisions/0013-job-trusts-the-table.md).
ENABLED_KEY = "icepack.enabled"
TYPE_ENABLED_KEYS = {
    "cleanup": "icepack.cleanup.enabled",
    "merge": "icepack.merge.enabled",
    "sort": "icepack.sort.enabled",
    "orphans": "icepack.orphan.enabled",
}
GC_ENABLED_KEY = "gc.enabled"
# The table's `icepack.*` key wins over Iceberg's own, which wins over Iceberg's default.
MAX_SNAPSHOT_AGE_KEYS = ("icepack.history.expire.max-snapshot-age-ms", "history.expire.max-snapshot-age-ms")
MIN_SNAPSHOTS_KEYS = ("icepack.history.expire.min-snapshots-to-keep", "history.expire.min-snapshots-to-keep")
DEFAULT_MAX_SNAPSHOT_AGE_MS = 5 * 24 * 60 * 60 * 1000  # Iceberg's MAX_SNAPSHOT_AGE_MS_DEFAULT
DEFAULT_MIN_SNAPSHOTS_TO_KEEP = 1  # Iceberg's MIN_SNAPSHOTS_TO_KEEP_DEFAULT
_WHOLE_NUMBER = re.compile(r"[0-9]+")


def _switch(properties: Mapping[str, str], key: str) -> bool:
    """`true`/`false` (any case, trimmed) as the planner reads it; anything else: on (its default)."""
    text = properties.get(key)
    return text is None or text.strip().lower() != "false"


def _integer_at_least(properties: Mapping[str, str], keys: tuple[str, ...], minimum: int, default: int) -> int:
    """The first of `keys` (in precedence order) holding a whole number ≥ minimum; else default."""
    for key in keys:
        text = (properties.get(key) or "").strip()
        if _WHOLE_NUMBER.fullmatch(text) and int(text) >= minimum:
            return int(text)
    return default


def table_retention(properties: Mapping[str, str]) -> tuple[int, int]:
    """(max snapshot age ms, min snapshots to keep) by the table's own properties."""
    return (
        _integer_at_least(properties, MAX_SNAPSHOT_AGE_KEYS, 0, DEFAULT_MAX_SNAPSHOT_AGE_MS),
        _integer_at_least(properties, MIN_SNAPSHOTS_KEYS, 1, DEFAULT_MIN_SNAPSHOTS_TO_KEEP),
    )


def guard_table(
    task: dict[str, Any], table_uuid: str, metadata_table: bool, properties: Mapping[str, str], now_ms: int
) -> dict[str, Any]:
    """What the job may do on the table it loaded, whatever the task says.

    Raises Refused when the loaded table is not the task's (another UUID: dropped and
    recreated, or a name that resolved to another table), is a metadata table, or its own
    properties pause it, switch the task's type off or turn GC off (cleanup). For a cleanup,
    returns the more conservative of the task's and the table's retention:
    `{"olderThanMs": …, "retainLast": …}` (the older cutoff, the larger count); else `{}`.
    """
    name = ".".join([*task["table"]["namespace"], task["table"]["name"]])
    if metadata_table:
        raise Refused(f"{name} resolves to a metadata table of another table, not a table of its own")
    expected = task["state"]["tableUuid"]
    if table_uuid != expected:
        raise Refused(
            f"{name} is not the table the task was planned for: its UUID is {table_uuid}, the task's "
            f"{expected} (dropped and recreated?); nothing done"
        )
    if not _switch(properties, ENABLED_KEY):
        raise Refused(f"{name} is paused by its own property {ENABLED_KEY}=false; nothing done")
    type_key = TYPE_ENABLED_KEYS[task["type"]]
    if not _switch(properties, type_key):
        raise Refused(f"{name} switches {task['type']} off ({type_key}=false); nothing done")
    if task["type"] not in ("cleanup", "orphans"):
        return {}
    # Java's Boolean.parseBoolean, as Iceberg reads it: anything but "true" turns GC off.
    if properties.get(GC_ENABLED_KEY, "true").lower() != "true":
        what = "its snapshots are not expired" if task["type"] == "cleanup" else "its files may be shared: no orphan is moved"
        raise Refused(f"{name} has {GC_ENABLED_KEY}=false: {what}; nothing done")
    params = task["parameters"]
    if task["type"] == "orphans":
        # Nessie serves a table's current snapshot only (its history is Nessie's commit log):
        # every file of an older commit would look orphaned. Nessie's own GC handles those.
        nessie = sorted(key for key in properties if key.startswith("nessie."))
        if nessie:
            raise Refused(
                f"{name} is a Nessie table ({nessie[0]}): its metadata shows one snapshot, so live files "
                "of older commits would look orphaned; use Nessie's GC; nothing done"
            )
        return orphan_limits(properties, params, now_ms)
    max_age_ms, min_keep = table_retention(properties)
    task_cutoff = parse_instant_ms(params["olderThan"], "task.parameters.olderThan")
    return {
        # Never before the epoch: an enormous table retention keeps everything.
        "olderThanMs": max(0, min(task_cutoff, now_ms - max_age_ms)),
        "retainLast": max(params["retainLast"], min_keep),
    }


# Java exception classes by what they mean for the task. Matched against the whole cause chain.
_NOT_FOUND = (
    "org.apache.iceberg.exceptions.NoSuchTableException",
    "org.apache.spark.sql.catalyst.analysis.NoSuchTableException",
    "org.apache.iceberg.exceptions.NoSuchNamespaceException",
    "org.apache.spark.sql.catalyst.analysis.NoSuchNamespaceException",
)
_CONFLICT = (
    "org.apache.iceberg.exceptions.CommitFailedException",
    "org.apache.iceberg.exceptions.CommitStateUnknownException",
)
_TRANSIENT = (
    "java.io.IOException",
    "java.io.UncheckedIOException",
    "java.net.",
    "org.apache.iceberg.exceptions.RuntimeIOException",
    "org.apache.iceberg.exceptions.ServiceUnavailableException",
    "org.apache.iceberg.exceptions.ServiceFailureException",
    "org.apache.hc.core5.http.",
    "software.amazon.awssdk.core.exception.SdkClientException",
)
# A ValidationException is a conflict only when a concurrent commit caused it; otherwise it is
# a bad request (unknown sort column, …).
_CONFLICT_PHRASES = ("conflict", "found new", "missing required files", "cannot commit", "concurrent")
# A REST catalog before Iceberg 1.11 answers 400 when a commit to another branch of the table
# took the sequence number this commit was built with (apache/iceberg#15001; from PR #15126 the
# server sends a CommitFailedException instead): nothing was committed, a retry on fresh
# metadata succeeds. Seen by the lake simulator on a table whose writers commit to a branch.
_STALE_SEQUENCE = re.compile(
    r"cannot add snapshot with sequence number \d+ older than last sequence number \d+"
)


_OOM = "java.lang.OutOfMemoryError"


def classify(chain: list[tuple[str, str]]) -> str:
    """Error kind from a Java cause chain [(class name, message)], outermost first."""
    names = [name for name, _ in chain]
    # An executor's OOM reaches the driver inside a SparkException's message, not as a cause.
    if any(n == _OOM or _OOM in message for n, message in chain):
        return "out-of-memory"
    if any(n in _NOT_FOUND for n in names):
        return "table-not-found"
    if any(n in _CONFLICT for n in names):
        return "commit-conflict"
    if any(_STALE_SEQUENCE.search(message.lower()) for _, message in chain):
        return "commit-conflict"
    for name, message in chain:
        if name == "org.apache.iceberg.exceptions.ValidationException":
            lower = message.lower()
            return "commit-conflict" if any(p in lower for p in _CONFLICT_PHRASES) else "bad-input"
    if any(n.startswith(prefix) for n in names for prefix in _TRANSIENT):
        return "io"
    if any(n == "java.lang.IllegalArgumentException" for n in names):
        return "bad-input"
    return "failed"


def result_line(payload: dict[str, Any]) -> str:
    return json.dumps(payload, separators=(",", ":"), sort_keys=True)


def error_payload(task_id: str | None, kind: str, message: str) -> dict[str, Any]:
    code, retryable = ERROR_KINDS[kind]
    return {
        "ok": False,
        "taskId": task_id,
        "exitCode": code,
        "error": {"kind": kind, "message": message[:MAX_MESSAGE_CHARS], "retryable": retryable},
    }


def failure_payload(task_id: str | None, error: BaseException) -> dict[str, Any]:
    """The result of a task that failed with `error`: its JobError kind, else the kind of the
    Java exception behind it (classify), else `failed`."""
    if isinstance(error, JobError):
        return error_payload(task_id, error.kind, str(error))
    chain = java_chain(error)
    kind = classify(chain) if chain else "failed"
    message = f"{chain[0][0]}: {chain[0][1]}" if chain else f"{type(error).__name__}: {error}"
    # The root cause is usually the telling part of a long Java chain.
    if len(chain) > 1 and chain[-1][1]:
        message = f"{message} (caused by {chain[-1][0]}: {chain[-1][1]})"
    return error_payload(task_id, kind, message)


def read_secret(env: dict[str, str], name: str) -> str | None:
    if env.get(name):
        return env[name]
    path = env.get(f"{name}_FILE")
    if path:
        try:
            with open(path, encoding="utf-8") as fh:
                return fh.read().strip()
        except OSError as error:
            raise BadInput(f"cannot read {name}_FILE: {error.strerror}") from None
    return None


def read_task_text(args: argparse.Namespace) -> str:
    if args.task_json is not None:
        return args.task_json
    if getattr(args, "tasks_json", None) is not None:
        return args.tasks_json
    path = args.task if args.task is not None else args.tasks
    if path == "-":
        return sys.stdin.read()
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except OSError as error:
        raise BadInput(f"cannot read the task file {path}: {error.strerror}") from None


def is_batch(args: argparse.Namespace) -> bool:
    """`--tasks` or `--tasks-json`: the input is a batch's task list."""
    return getattr(args, "tasks", None) is not None or getattr(args, "tasks_json", None) is not None


def read_task(args: argparse.Namespace) -> Any:
    """The task (or the batch's tasks) as JSON, not yet checked (parse_task does that)."""
    text = read_task_text(args)
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        what = "tasks" if is_batch(args) else "task"
        raise BadInput(f"{what} is not valid JSON: {error}") from None


# ---------------------------------------------------------------------------------------------
# Spark parts.


def java_chain(error: BaseException) -> list[tuple[str, str]]:
    """(class, message) of the Java exception behind a Python error, and its causes.

    A raw Py4JJavaError carries it as `java_exception`; PySpark converts the Java exceptions it
    knows (AnalysisException and its subclasses, such as NoSuchTableException) into its own
    CapturedException subclasses, which keep the Java throwable as `_origin`.
    """
    java = getattr(error, "java_exception", None) or getattr(error, "_origin", None)
    chain: list[tuple[str, str]] = []
    seen = 0
    while java is not None and seen < 20:
        chain.append((java.getClass().getName(), str(java.getMessage() or "")))
        java = java.getCause()
        seen += 1
    return chain


# Executors sample their memory every second while tasks run, so that each task end carries
# the heap peak seen during the task (docs/spark-job.md#figures). Spark's default samples only at
# heartbeats, every 10 s and first 10–20 s after an executor starts: a run shorter than that
# reported no executor heap at all, and learned sizing (issue 18) had nothing to learn from.
EXECUTOR_METRICS_POLLING = ("spark.executor.metrics.pollingInterval", "1s")


def build_session(args: argparse.Namespace, task_type: str):
    from pyspark.sql import SparkSession

    name = args.catalog_name
    prefix = f"spark.sql.catalog.{name}"
    builder = (
        SparkSession.builder.appName(f"icepack-{task_type}")
        .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
        .config(*EXECUTOR_METRICS_POLLING)
    )
    if args.catalog_uri:
        builder = (
            builder.config(prefix, "org.apache.iceberg.spark.SparkCatalog")
            .config(f"{prefix}.type", "rest")
            .config(f"{prefix}.uri", args.catalog_uri)
            .config(f"{prefix}.cache-enabled", "false")
        )
    if args.warehouse:
        builder = builder.config(f"{prefix}.warehouse", args.warehouse)
    for env_name, prop in SECRET_PROPERTIES.items():
        secret = read_secret(dict(os.environ), env_name)
        if secret:
            builder = builder.config(f"{prefix}.{prop}", secret)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(os.environ.get("ICEPACK_SPARK_LOG_LEVEL", "WARN"))
    return spark


def load_table(spark, catalog_name: str, table: dict[str, Any]):
    """The Iceberg Table by catalog and Iceberg `TableIdentifier`: a structured identifier,
    never parsed text, and never Spark's `SparkCatalog.loadTable`, which resolves a missing
    `ns.t.branch_x` (`tag_*`, `snapshot_id_*`, `at_timestamp_*`, `changes`, `rewrite`) to table
    `ns.t`. Iceberg's catalog still turns `ns.t.files` into a metadata table of `ns.t`;
    `is_metadata_table` tells, and `guard_table` refuses it."""
    tj = task_jvm(spark.sparkContext._jvm)
    namespace = spark.sparkContext._gateway.new_array(tj.string, len(table["namespace"]))
    for i, part in enumerate(table["namespace"]):
        namespace[i] = part
    ident = tj.identifier_of(tj.namespace_of(namespace), table["name"])
    catalog = spark._jsparkSession.sessionState().catalogManager().catalog(catalog_name)
    return catalog.icebergCatalog().loadTable(ident)


def is_metadata_table(table) -> bool:
    """True for Iceberg's metadata tables (`files`, `snapshots`, …), by the Java class chain."""
    cls = table.getClass()
    while cls is not None:
        if cls.getName() == "org.apache.iceberg.BaseMetadataTable":
            return True
        cls = cls.getSuperclass()
    return False


def _term(expressions, transform: str, column: str):
    """The Iceberg term `transform(column)`, built as an object (never parsed text)."""
    match = _TRANSFORM.fullmatch(transform)
    if transform == "identity":
        return expressions.ref(column)
    if match is not None and match.group(1) is not None:
        return getattr(expressions, match.group(1))(column, int(match.group(2)))
    return getattr(expressions, transform)(column)


def partition_filter(jvm, predicates: list[dict[str, Any]], table=None, where: str = "task.parameters.partitionFilter"):
    """AND of `transform(column) = value` (IS NULL for null). With the table, values are
    converted to the source column's type and a column the schema lacks is bad input."""
    expressions = jvm.org.apache.iceberg.expressions.Expressions
    result = None
    for i, predicate in enumerate(predicates):
        column, value = predicate["column"], predicate["value"]
        transform = predicate.get("transform", "identity")
        if table is not None:
            field = table.schema().findField(column)
            if field is None:
                raise BadInput(f"{where}[{i}].column {column!r} is not a column of the table")
            value = predicate_value(transform, str(field.type().typeId().name()), value, f"{where}[{i}]")
        term = _term(expressions, transform, column)
        condition = expressions.isNull(term) if value is None else expressions.equal(term, value)
        result = condition if result is None else getattr(expressions, "and")(result, condition)
    return result


def rewrite_filter(jvm, table, params: dict[str, Any]):
    """What a merge or sort rewrites: `partitionFilter` AND any of `partitions` and `partitionSets`; None = all."""
    result = None
    if params.get("partitionFilter"):
        result = partition_filter(jvm, params["partitionFilter"], table)
    # Any partition of `partitions` and of `partitionSets` (the compact form the planner writes).
    named = [(f"task.parameters.partitions[{i}]", p) for i, p in enumerate(params.get("partitions") or [])]
    named += partition_sets(params)
    if named:
        expressions = jvm.org.apache.iceberg.expressions.Expressions
        anyof = None
        for path, partition in named:
            one = partition_filter(jvm, partition, table, path)
            anyof = one if anyof is None else getattr(expressions, "or")(anyof, one)
        result = anyof if result is None else getattr(expressions, "and")(result, anyof)
    return result


def sort_order(jvm, table, columns: list[dict[str, Any]]):
    null_order = jvm.org.apache.iceberg.NullOrder
    builder = jvm.org.apache.iceberg.SortOrder.builderFor(table.schema())
    for column in columns:
        nulls = null_order.NULLS_LAST if column.get("nullOrder") == "nulls-last" else null_order.NULLS_FIRST
        if column.get("direction", "asc") == "desc":
            builder = builder.desc(column["name"], nulls)
        else:
            builder = builder.asc(column["name"], nulls)
    return builder.build()


def snapshot_count(table) -> int:
    """The table's snapshots: one Py4J call for the list's size (Iceberg's `snapshots()` is a
    java.util.List, which Py4J hands over as a sized sequence), not one per snapshot."""
    snapshots = table.snapshots()
    return len(snapshots) if hasattr(snapshots, "__len__") else sum(1 for _ in snapshots)


class TaskJvm:
    """What every task's own steps call in the JVM — the table's load, the guard's properties,
    the before and after figures, the commit totals, the memory probe — looked up once per
    session (`task_jvm`). Py4J resolves each name of `jvm.org.apache.….Class.method` with a
    round trip of its own (a class lookup in the JVM), and a Java map or list crosses one entry
    per round trip: a merge's load, guard, figures, commit totals and probes took ~790–900 round
    trips and 0.12–0.16 CPU-s, now ~44 and ~0.01 (bench/results/task-cost-merge-rest-2026-12-04.md).
    So the classes and static methods are kept here, and maps and snapshots cross as JSON text
    written by Iceberg's own serializers (its JSON mapper, `SnapshotParser`), one transfer
    each, parsed exactly."""

    def __init__(self, jvm) -> None:
        iceberg = jvm.org.apache.iceberg
        f = per_session(jvm, _JvmFunctions)
        string = jvm.java.lang.String
        self.string = string
        self.namespace_of = iceberg.catalog.Namespace.of
        self.identifier_of = iceberg.catalog.TableIdentifier.of
        self.spark_actions = iceberg.spark.actions.SparkActions.get
        self.format_version = iceberg.TableUtil.formatVersion
        # A Map<String, String> as a JSON object; a snapshot as Iceberg writes it in metadata.
        self.map_json = iceberg.util.JsonUtil.mapper().writeValueAsString
        self.snapshot_json = iceberg.SnapshotParser.toJson
        # The commits since a snapshot: SnapshotUtil's ancestors walk, mapped to one JSON array.
        self.ancestors_between = iceberg.util.SnapshotUtil.ancestorsBetween
        self.new_list = iceberg.relocated.com.google.common.collect.Lists.newArrayList
        self.each_snapshot_json = f.of(f.static(iceberg.SnapshotParser, "toJson", string, iceberg.Snapshot))
        self.json_array = jvm.java.util.stream.Collectors.joining(",", "[", "]")
        # The driver JVM's heap: the peaks of its heap pools, summed in the JVM.
        management = jvm.java.lang.management
        factory = management.ManagementFactory
        self.memory_pools, self.memory_bean = factory.getMemoryPoolMXBeans, factory.getMemoryMXBean
        pool = management.MemoryPoolMXBean
        self.heap_pool = f.predicate(
            f.is_value(f.method(pool, "getType", management.MemoryType), management.MemoryType.HEAP)
        )
        peak_used = f.then(
            f.method(pool, "getPeakUsage", management.MemoryUsage),
            f.method(management.MemoryUsage, "getUsed", jvm.java.lang.Long.TYPE),
        )
        self.sum_peak_used = jvm.java.util.stream.Collectors.summingLong(
            f.proxies.asInterfaceInstance(jvm.java.util.function.ToLongFunction._java_lang_class, peak_used)
        )

    def snapshots_json(self, snapshots) -> list[dict[str, Any]]:
        """The snapshots (a Java list) as Iceberg writes them, in one transfer."""
        return json.loads(snapshots.stream().map(self.each_snapshot_json).collect(self.json_array))


# What the session looked up in the JVM (`per_session`): (the Py4J JVM view it was made in,
# each kind's one instance).
_SESSION_JVM: list[tuple[Any, dict[Any, Any]]] = []


def per_session(jvm, kind):
    """The session's one `kind(jvm)` — `_JvmFunctions`, `TaskJvm`, `IcebergJvm` — made on its
    first use; a new JVM view (another session) starts afresh. One that fails to be made is not
    kept: the next task looks again."""
    if not (_SESSION_JVM and _SESSION_JVM[0][0] is jvm):
        _SESSION_JVM[:] = [(jvm, {})]
    made = _SESSION_JVM[0][1]
    if kind not in made:
        made[kind] = kind(jvm)
    return made[kind]


def task_jvm(jvm) -> TaskJvm:
    """The session's `TaskJvm` (public classes of the JDK and of the Iceberg the job runs
    with: a lookup that fails fails the task, as the calls it stands for would, and the next
    task looks again)."""
    return per_session(jvm, TaskJvm)


def table_properties(tj: TaskJvm, table) -> dict[str, str]:
    """The table's own properties, in one transfer (a Java map crosses Py4J one entry per
    round trip)."""
    return json.loads(tj.map_json(table.properties()))


def snapshot_summary(read: Mapping[str, Any] | None) -> tuple[str | None, str | None, dict[str, str]]:
    """(snapshot id, operation, summary without the operation) of a snapshot as Iceberg writes
    it (`SnapshotParser`: the operation inside `summary`; no `summary` when the snapshot has no
    operation); None: no snapshot."""
    if read is None:
        return None, None, {}
    summary = dict(read.get("summary") or {})
    operation = summary.pop("operation", None)
    return str(read["snapshot-id"]), operation, summary


def table_figures(tj: TaskJvm, table, refresh: bool = True) -> dict[str, Any]:
    """The table's figures from its current snapshot (read in one transfer); `refresh=False`
    for a table just loaded from the catalog (a refresh would load the same metadata a second
    time)."""
    if refresh:
        table.refresh()
    snapshot = table.currentSnapshot()
    snapshot_id, _, summary = snapshot_summary(None if snapshot is None else json.loads(tj.snapshot_json(snapshot)))
    return {
        "snapshotId": snapshot_id,
        "snapshots": snapshot_count(table),
        "dataFiles": int(summary.get("total-data-files", 0)),
        "deleteFiles": int(summary.get("total-delete-files", 0)),
        "bytes": int(summary.get("total-files-size", 0)),
        "records": int(summary.get("total-records", 0)),
    }


def run_rewrite(
    spark, table, task: dict[str, Any], max_groups: int | None, driver_dangling: bool = False
) -> dict[str, Any]:
    """A merge or sort, then the removal of dangling delete files (in the driver when
    `driver_dangling`: the table is under the bound, decision 0054)."""
    jvm = spark.sparkContext._jvm
    params = task["parameters"]
    tj = task_jvm(jvm)
    actions = tj.spark_actions(spark._jsparkSession)
    where = rewrite_filter(jvm, table, params)
    if task["type"] == "sort" and params["strategy"] == "hilbert":
        out = run_hilbert_rewrite(spark, table, params, where)
    else:
        out = run_rewrite_action(spark, actions, table, task, where, max_groups)
    format_version = tj.format_version(table)
    if format_version >= 2:
        out.update(remove_dangling_deletes(spark, actions, table, params, where, max_groups, driver_dangling))
    return out


def run_rewrite_action(spark, actions, table, task: dict[str, Any], where, max_groups: int | None) -> dict[str, Any]:
    """Iceberg's rewrite_data_files action: bin-pack, sort or z-order."""
    jvm = spark.sparkContext._jvm
    gateway = spark.sparkContext._gateway
    params = task["parameters"]
    action = actions.rewriteDataFiles(table)
    if task["type"] == "sort" and params["strategy"] == "zorder":
        names = gateway.new_array(jvm.java.lang.String, len(params["columns"]))
        for i, column in enumerate(params["columns"]):
            names[i] = column["name"]
        action = action.zOrder(names)
    elif task["type"] == "sort":
        action = action.sort(sort_order(jvm, table, params["columns"]))
    else:
        action = action.binPack()
    for key, value in rewrite_options(params, max_groups).items():
        action = action.option(key, value)
    if where is not None:
        action = action.filter(where)
    result = action.execute()
    return {
        "rewriteDataFiles": {
            "rewrittenDataFiles": result.rewrittenDataFilesCount(),
            "addedDataFiles": result.addedDataFilesCount(),
            "rewrittenBytes": result.rewrittenBytesCount(),
            "failedDataFiles": result.failedDataFilesCount(),
            "removedDeleteFiles": result.removedDeleteFilesCount(),
        }
    }


def remove_dangling_deletes(
    spark, actions, table, params: dict[str, Any], where, max_groups: int | None, in_driver: bool = False
) -> dict[str, Any]:
    """Removes the delete files that apply to no live data file any more (docs/spark-job.md).

    In the driver (`in_driver`, a table under the bound; decision 0054) when
    `dangling_in_driver` can judge the table: Iceberg's own scan planning names every delete
    file that applies to a live data file, every other one is removed with one commit. Else,
    with Spark:

    1. Iceberg's RemoveDanglingDeleteFiles action (what rewrite_data_files runs with
       `remove-dangling-deletes=true`; called here because that option is skipped when the
       rewrite finds nothing to rewrite): delete files whose partition has no live data file
       they can apply to by sequence number, and deletion vectors of removed files.
    2. On format v2, rewrite_position_delete_files, which drops every position delete of a data
       file that is no longer live. With `rewrite-all` when file-scoped position-delete files
       name removed data files: the common case after a merge, as the rewritten files keep the
       starting sequence number, so step 1 cannot tell those deletes are dangling.

    `rewritePositionDeletes` (the planner's) runs rewrite_position_delete_files with the task's
    thresholds on both paths.
    """
    jvm = spark.sparkContext._jvm
    judged = dangling_in_driver(spark, table) if in_driver else None
    if judged is not None:
        out: dict[str, Any] = {"removeDanglingDeleteFiles": {**judged, "ranIn": "driver"}}
        dangling = 0  # all removed: nothing left for a rewrite-all
    else:
        removed = actions.removeDanglingDeleteFiles(table).execute().removedDeleteFiles()
        out = {
            "removeDanglingDeleteFiles": {
                "removedDeleteFiles": jvm.org.apache.iceberg.relocated.com.google.common.collect.Iterables.size(removed),
                "ranIn": "spark",
            }
        }
        # Deletion vectors (format v3) are folded by rewrite_data_files and removed by step 1;
        # position-delete rewriting is for v2 position-delete files.
        if jvm.org.apache.iceberg.TableUtil.formatVersion(table) != 2:
            return out
        # The metadata-table scan is a Spark job or two (about half a CPU-second in a warm session,
        # bench/results/task-cost-warm-2026-12-04.md): not run when no delete file is left to judge.
        dangling = dangling_position_delete_files(spark, table) if has_live_delete_files(table) else 0
        out["removeDanglingDeleteFiles"]["danglingPositionDeleteFilesFound"] = dangling
    if not params["rewritePositionDeletes"] and dangling == 0:
        return out
    action = actions.rewritePositionDeletes(table)
    for key, value in rewrite_options(params, max_groups).items():
        if key != "delete-file-threshold":
            action = action.option(key, value)
    if dangling > 0:
        action = action.option("rewrite-all", "true")
    if where is not None:
        action = action.filter(where)
    deletes = action.execute()
    out["rewritePositionDeleteFiles"] = {
        "rewrittenDeleteFiles": deletes.rewrittenDeleteFilesCount(),
        "addedDeleteFiles": deletes.addedDeleteFilesCount(),
        "rewrittenBytes": deletes.rewrittenBytesCount(),
        "addedBytes": deletes.addedBytesCount(),
    }
    return out


# A merge's dangling delete files judged in the driver (decision 0054). Under the bound a table's
# current snapshot is planned with Iceberg core (`table.newScan().planFiles()`, what a query
# planner does in its driver): Iceberg's delete-file index gives each live data file the delete
# files that may apply to it (partition and sequence number, the referenced file of a file-scoped
# delete, path and column bounds); a live delete file it gives to none deletes no row and is
# removed, all of them in one RewriteFiles commit, as Iceberg's own action commits its finds.

#: Live files (the merge's before figures: data + delete files) under which a merge judges and
#: removes its dangling delete files in the driver. Planning reads the current snapshot's
#: manifests, the driver-side work ADR 0051's bound is about. `--driver-dangling-max-files`
#: overrides it (0: never). 20,000: the largest size measured, where the driver still cost a
#: third of Spark's jobs, on local disk and on S3 (bench/results/driver-bound-2026-12-05.md);
#: where it stops being cheaper was not reached.
DRIVER_DANGLING_MAX_FILES = 20_000


def dangling_counts(
    dangling: list[tuple[str, int, str, str | None]],
    min_data_sequence: Mapping[str, int],
    live_data_files: set[str],
    partitioned: bool,
) -> dict[str, int]:
    """What the Spark path reports for the dangling delete files the driver removed, so both
    paths report the same counts. `dangling`: (content, data sequence number, partition,
    referenced data file or None) per file; `min_data_sequence`: the smallest data sequence
    number of the live data files by partition. `removedDeleteFiles`: those Iceberg's
    RemoveDanglingDeleteFiles finds (no live data file of their partition they can apply to by
    sequence number; nothing on a table with one unpartitioned spec, which it skips);
    `danglingPositionDeleteFilesFound`: of the rest, position-delete files that name one data
    file no longer live (the job's metadata-table count); `danglingDeleteFilesRemoved`: all."""
    removed = found = 0
    for content, sequence, partition, referenced in dangling:
        least = min_data_sequence.get(partition)
        if partitioned and (
            least is None
            or (content == "POSITION_DELETES" and sequence < least)
            or (content == "EQUALITY_DELETES" and sequence <= least)
        ):
            removed += 1
        elif content == "POSITION_DELETES" and referenced is not None and referenced not in live_data_files:
            found += 1
    return {
        "removedDeleteFiles": removed,
        "danglingPositionDeleteFilesFound": found,
        "danglingDeleteFilesRemoved": len(dangling),
    }


class _JvmFunctions:
    """`java.util.function.Function`s made in the JVM from Iceberg's getters
    (`MethodHandleProxies`), so a list of files is mapped there and crosses Py4J as one string,
    not one round trip per file. No Python callback server is involved."""

    def __init__(self, jvm) -> None:
        self.jvm = jvm
        self.handles = jvm.java.lang.invoke.MethodHandles
        self.lookup = self.handles.publicLookup()
        self.method_type = jvm.java.lang.invoke.MethodType.methodType
        self.proxies = jvm.java.lang.invoke.MethodHandleProxies
        self.function = jvm.java.util.function.Function._java_lang_class
        self.string = jvm.java.lang.String._java_lang_class
        self.object = jvm.java.lang.Object._java_lang_class
        self.string_class = jvm.java.lang.String
        self.to_list = jvm.java.util.stream.Collectors.toList()
        self.array = jvm.java.lang.reflect.Array
        self.contains = None  # Collection.contains, looked up on first use
        self.classes: dict[str, Any] = {}  # java.lang.Class by name (`cls`)
        # String.valueOf(Object): what each value crosses as (`null` → "null").
        self.value_of = self.lookup.findStatic(self.string, "valueOf", self.method_type(self.string, self.object))

    def then(self, first, second):
        """The handle of `second(first(x))`."""
        return self.handles.filterReturnValue(first, second)

    def keep_first(self):
        """The `java.util.function.BinaryOperator` `(a, b) -> a`."""
        first = self.handles.dropArguments(self.handles.identity(self.object), 1, self._classes((self.object,)))
        return self.proxies.asInterfaceInstance(self.cls("java.util.function.BinaryOperator"), first)

    def of(self, handle):
        return self.proxies.asInterfaceInstance(self.function, handle)

    def mapped(self, items, function):
        """`items` (a Java list) mapped by `function`, as a Java list."""
        return items.stream().map(function).collect(self.to_list)

    def text_by(self, items, renders) -> list[str]:
        """The Function `renders` (`renders`: a handle's value rendered by String.valueOf)
        applied to each of `items` (a Java list), in one transfer."""
        if items.size() == 0:
            return []
        return self.strings(self.mapped(items, renders))

    def rendered(self, handle):
        """The handle of `String.valueOf(handle(x))`."""
        return self.then(handle.asType(handle.type().changeReturnType(self.object)), self.value_of)

    def renders(self, handle):
        """The Function `x -> String.valueOf(handle(x))`."""
        return self.of(self.rendered(handle))

    def strings(self, values) -> list[str]:
        """A Java list of strings in one transfer; ValueError when one of them holds the
        separator (the count read back differs)."""
        size = values.size()
        if size == 0:
            return []
        split = split_transfer(str(self.string_class.join(_UNIT_SEPARATOR, values)), size)
        if split is None:
            raise ValueError(f"{size} values, another count after the transfer")
        return split

    def strings_exact(self, values) -> list[str]:
        """`strings`, or, when a value holds the separator, each value on its own (a round trip
        each): for what must be read whatever it holds (paths after a commit)."""
        try:
            return self.strings(values)
        except ValueError:
            return [str(value) for value in _each(values)]

    def text_exact(self, items, renders) -> list[str]:
        """`text_by` by `strings_exact`."""
        if items.size() == 0:
            return []
        return self.strings_exact(self.mapped(items, renders))

    def static(self, owner, name: str, returns, *params):
        """The handle of the static `owner.name(params)` (classes as `cls` takes them)."""
        return self.lookup.findStatic(self.cls(owner), name, self._type(returns, params))

    def method(self, owner, name: str, returns, *params):
        """The handle of `owner.name(params)`, the receiver first (classes as `cls` takes them)."""
        return self.lookup.findVirtual(self.cls(owner), name, self._type(returns, params))

    def java(self, name: str) -> Any:
        """The Py4J JavaClass of the class `name`, for its static members, made without a
        round trip (`jvm.a.b.C` takes one per name part)."""
        from py4j.java_gateway import JavaClass

        return JavaClass(name, self.jvm._gateway_client)

    def cls(self, kind) -> Any:
        """A `java.lang.Class`: of a class name (looked up once: one round trip), of a Py4J
        JavaClass, or a `java.lang.Class` as is (such as `Long.TYPE` for a primitive)."""
        from py4j.java_gateway import JavaClass

        if isinstance(kind, str):
            if kind not in self.classes:
                self.classes[kind] = self.java(kind)._java_lang_class
            return self.classes[kind]
        return kind._java_lang_class if isinstance(kind, JavaClass) else kind

    def _type(self, returns, params) -> Any:
        """The MethodType; no array of parameter classes for none or one (fewer round trips)."""
        if len(params) <= 1:
            return self.method_type(self.cls(returns), *(self.cls(param) for param in params))
        return self.method_type(self.cls(returns), self._classes(params))

    def _classes(self, params) -> Any:
        return self._array([self.cls(param) for param in params], self.cls("java.lang.Class"))

    def _array(self, items: list, component) -> Any:
        array = self.array.newInstance(component, len(items))
        for index, item in enumerate(items):
            array[index] = item
        return array

    def with_args(self, handle, position: int, *values):
        """`handle` with its arguments from `position` on fixed to `values` (Java objects)."""
        return self.handles.insertArguments(handle, position, self._array(list(values), self.object))

    def predicate(self, handle):
        """A `java.util.function.Predicate` of a handle returning boolean."""
        return self.proxies.asInterfaceInstance(self.cls("java.util.function.Predicate"), handle)

    def is_in(self, handle, values):
        """The handle of `values.contains(handle(x))` (`values` a Java collection)."""
        if self.contains is None:
            self.contains = self.lookup.findVirtual(
                self.jvm.java.util.Collection._java_lang_class,
                "contains",
                self.method_type(self.jvm.java.lang.Boolean.TYPE, self.object),
            )
        return self.then(handle.asType(handle.type().changeReturnType(self.object)), self.contains.bindTo(values))

    def is_value(self, handle, value):
        """The handle of `value.equals(handle(x))`."""
        equals = self.lookup.findVirtual(
            self.object, "equals", self.method_type(self.jvm.java.lang.Boolean.TYPE, self.object)
        ).bindTo(value)
        return self.then(handle.asType(handle.type().changeReturnType(self.object)), equals)


def split_transfer(joined: str, size: int) -> list[str] | None:
    """The `size` values of one joined transfer; None when the count read back differs (a value
    held the separator)."""
    values = joined.split(_UNIT_SEPARATOR)
    return values if len(values) == size else None


# Separates the strings of one transfer: a path or a rendered partition does not hold it.
_UNIT_SEPARATOR = "\x1f"


_ICEBERG = "org.apache.iceberg."
_COLLECT = _ICEBERG + "relocated.com.google.common.collect."


class IcebergJvm:
    """What the driver-side paths read Iceberg metadata with in the JVM — a merge's dangling
    deletes (decision 0054) and a cleanup's expiry count (decision 0051): Functions of
    Iceberg's getters (`_JvmFunctions`) and the JVM classes they call, one per session
    (`iceberg_jvm`). What both use is looked up when it is made; what one path alone uses on
    that path's first use (`load`), so a session that only merges does not look up the
    expiry's, and the other way round. All before anything is read or committed."""

    def __init__(self, jvm) -> None:
        f = per_session(jvm, _JvmFunctions)
        self.jvm, self.f = jvm, f
        self.loaded: set[str] = set()
        # Classes by name (`_JvmFunctions.cls`, `java`): fewer round trips than `jvm.a.b.C`.
        self.lists = f.java(_COLLECT + "Lists")
        self.iterables = f.java(_COLLECT + "Iterables")
        # Delete manifests and their live entries (`live_delete_entries`).
        self.closeable_iterable = f.java(_ICEBERG + "io.CloseableIterable")
        self.read_delete_manifest = f.static(
            _ICEBERG + "ManifestFiles",
            "readDeleteManifest",
            _ICEBERG + "ManifestReader",
            _ICEBERG + "ManifestFile",
            _ICEBERG + "io.FileIO",
            "java.util.Map",
        )
        # Content files (data and delete files), rendered by String.valueOf (`null` → "null").
        self.location = f.renders(f.method(_ICEBERG + "ContentFile", "location", "java.lang.String"))
        self.content = f.renders(f.method(_ICEBERG + "ContentFile", "content", _ICEBERG + "FileContent"))
        # RemoveSnapshots' package-private `withIncrementalCleanup` and its argument (false),
        # found by reflection on the first cleanup (`reachable_cleanup`).
        self.incremental_cleanup: tuple[Any, Any] | None = None

    def load(self, use: str) -> None:
        """Looks up what `use` ("dangling" or "expiry") alone needs, once."""
        if use not in self.loaded:
            (self._dangling if use == "dangling" else self._expiry)()
            self.loaded.add(use)

    def _dangling(self) -> None:
        from py4j.java_gateway import get_method

        f = self.f
        self.delete_file_set = f.java(_ICEBERG + "util.DeleteFileSet")
        self.empty_set = f.java("java.util.Collections").emptySet()
        # Iceberg's `hasAddedFiles() || hasExistingFiles()`: a manifest with a live entry (an
        # unknown count counts as some).
        boolean = f.java("java.lang.Boolean").TYPE
        added = f.predicate(f.method(_ICEBERG + "ManifestFile", "hasAddedFiles", boolean))
        existing = f.predicate(f.method(_ICEBERG + "ManifestFile", "hasExistingFiles", boolean))
        self.has_live_entries = get_method(added, "or")(existing)
        self.sequence = f.renders(f.method(_ICEBERG + "ContentFile", "dataSequenceNumber", "java.lang.Long"))
        self.referenced = f.renders(
            f.static(_ICEBERG + "util.ContentFileUtil", "referencedDataFileLocation", "java.lang.String", _ICEBERG + "DeleteFile")
        )
        self.partition_data = f.method(_ICEBERG + "ContentFile", "partition", _ICEBERG + "StructLike")
        self.partition_to_path = f.method(
            _ICEBERG + "PartitionSpec", "partitionToPath", "java.lang.String", _ICEBERG + "StructLike"
        )
        # Planned scan tasks.
        self.deletes = f.of(f.method(_ICEBERG + "FileScanTask", "deletes", "java.util.List"))
        self.file = f.of(f.method(_ICEBERG + "ContentScanTask", "file", _ICEBERG + "ContentFile"))

    def _expiry(self) -> None:
        f = self.f
        string = "java.lang.String"
        self.hash_set, self.stream = f.java("java.util.HashSet"), f.java("java.util.stream.Stream")
        self.snapshot_id_handle = f.method(_ICEBERG + "Snapshot", "snapshotId", f.java("java.lang.Long").TYPE)
        self.snapshot_id = f.of(self.snapshot_id_handle)
        self.manifest_list = f.renders(f.method(_ICEBERG + "Snapshot", "manifestListLocation", string))
        self.statistics_path = f.renders(f.method(_ICEBERG + "StatisticsFile", "path", string))
        self.partition_statistics_path = f.renders(f.method(_ICEBERG + "PartitionStatisticsFile", "path", string))
        self.all_manifests = f.method(_ICEBERG + "Snapshot", "allManifests", "java.util.List", _ICEBERG + "io.FileIO")
        path = f.method(_ICEBERG + "ManifestFile", "path", string)
        self.manifest_path = f.renders(path)
        # Manifests by path, the first of each (allManifests of two snapshots share most).
        self.unique_by_path = f.java("java.util.stream.Collectors").toMap(
            f.of(path), f.java("java.util.function.Function").identity(), f.keep_first()
        )
        content = f.method(_ICEBERG + "ManifestFile", "content", _ICEBERG + "ManifestContent")
        self.is_delete_manifest = f.predicate(f.is_value(content, f.java(_ICEBERG + "ManifestContent").DELETES))

    def partition(self, spec):
        """The Function `file -> spec.partitionToPath(file.partition())`, as a string."""
        return self.f.renders(self.f.then(self.partition_data, self.partition_to_path.bindTo(spec)))


# What a path leaves to Spark's actions when this Iceberg lacks one of its getters, as logged.
_UNABLE = {
    "dangling": "dangling delete files not judged in the driver",
    "expiry": "expiry not counted in the driver",
}


def iceberg_jvm(jvm, use: str) -> IcebergJvm | None:
    """The session's `IcebergJvm`, made on its first use, with what `use` ("dangling" or
    "expiry") needs; None when this Iceberg lacks one of those getters, logged (the caller then
    leaves the work to Spark's actions). A failure is not kept: the next task looks again."""
    from py4j.protocol import Py4JJavaError

    try:
        x = per_session(jvm, IcebergJvm)
        x.load(use)
    except Py4JJavaError as error:
        print(f"icepack_job: {_UNABLE[use]}: {error.java_exception}", file=sys.stderr)
        return None
    return x


def live_delete_entries(x: IcebergJvm, io, specs, manifests):
    """The live entries of the delete manifests `manifests` (a Java list), copied, as a Java
    list: read through one `CloseableIterable.concat` of `ManifestFiles.readDeleteManifest`
    readers (each closed as it is read through, the concatenation closed after)."""
    f = x.f
    readers = f.mapped(manifests, f.of(f.with_args(x.read_delete_manifest, 1, io, specs)))
    entries = x.closeable_iterable.concat(readers)
    try:
        return x.lists.newArrayList(entries)
    finally:
        entries.close()


def dangling_in_driver(spark, table) -> dict[str, int] | None:
    """Judges the current snapshot's delete files with Iceberg core's scan planning and removes
    those that apply to no live data file with one RewriteFiles commit (validated from the
    snapshot planned; a concurrent commit that removed one of them fails it, a conflict).
    The counts of `dangling_counts`. None when the driver does not judge the table: a format
    other than 2 (v3 deletion vectors stay with Spark's action), more than one partition spec,
    a getter this Iceberg lacks, or a transfer that cannot be read back; Spark's actions then run."""
    jvm = spark.sparkContext._jvm
    specs = table.specs()
    if jvm.org.apache.iceberg.TableUtil.formatVersion(table) != 2 or specs.size() != 1:
        return None
    snapshot = table.currentSnapshot()
    if snapshot is None:
        return dangling_counts([], {}, set(), False)
    io = table.io()
    manifests = snapshot.deleteManifests(io)
    if manifests.isEmpty():
        return dangling_counts([], {}, set(), False)
    x = iceberg_jvm(jvm, "dangling")
    if x is None:
        # A table whose delete manifests hold no live entry is judged all the same, as before.
        return None if has_live_delete_files(table) else dangling_counts([], {}, set(), False)
    f = x.f
    manifests = manifests.stream().filter(x.has_live_entries).collect(f.to_list)  # those with a live entry
    if manifests.size() == 0:
        return dangling_counts([], {}, set(), False)
    live = x.delete_file_set.create()
    live.addAll(live_delete_entries(x, io, specs, manifests))
    planned = table.newScan().useSnapshot(snapshot.snapshotId()).planFiles()
    try:
        tasks = x.lists.newArrayList(planned)
    finally:
        planned.close()
    live.removeAll(x.lists.newArrayList(x.iterables.concat(f.mapped(tasks, x.deletes))))
    if live.isEmpty():
        return dangling_counts([], {}, set(), False)
    dangling = x.lists.newArrayList(live)
    data_files = f.mapped(tasks, x.file)
    partitioned = not table.spec().isUnpartitioned()
    try:
        min_data_sequence: dict[str, int] = {}
        partition = x.partition(table.spec()) if partitioned else None
        if partitioned:
            for part, seq in zip(f.text_by(data_files, partition), f.text_by(data_files, x.sequence)):
                min_data_sequence[part] = min(int(seq), min_data_sequence.get(part, int(seq)))
        judged = [
            (kind, int(seq), part, None if ref == "null" else ref)
            for kind, seq, part, ref in zip(
                f.text_by(dangling, x.content),
                f.text_by(dangling, x.sequence),
                f.text_by(dangling, partition) if partitioned else [""] * dangling.size(),
                f.text_by(dangling, x.referenced),
                strict=True,
            )
        ]
        live_data_files = set(f.text_by(data_files, x.location))
    except ValueError as error:
        print(f"icepack_job: {_UNABLE['dangling']}: {error}", file=sys.stderr)
        return None
    empty = x.empty_set
    table.newRewrite().validateFromSnapshot(snapshot.snapshotId()).rewriteFiles(empty, live, empty, empty).commit()
    return dangling_counts(judged, min_data_sequence, live_data_files, partitioned)


def has_live_delete_files(table) -> bool:
    """False only when the table's current snapshot has no delete file: no delete manifest
    with an added or existing file (Iceberg's `hasAddedFiles`/`hasExistingFiles` count an
    unknown count as some). Reads the manifest list, not the manifests."""
    snapshot = table.currentSnapshot()
    if snapshot is None:
        return False
    return any(m.hasAddedFiles() or m.hasExistingFiles() for m in _each(snapshot.deleteManifests(table.io())))


# Field id of the `file_path` column of position-delete files (Iceberg spec, reserved ids).
DELETE_FILE_PATH_FIELD_ID = 2147483546


def dangling_position_delete_files(spark, table) -> int:
    """Position-delete files that name one data file no longer live: by `referenced_data_file`,
    or by equal `file_path` bounds (how v2 writers record a file-scoped delete; Iceberg's
    ContentFileUtil.referencedDataFile reads it the same way). From the metadata tables."""
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F

    jvm = spark.sparkContext._jvm
    util = jvm.org.apache.iceberg.spark.SparkTableUtil
    kinds = jvm.org.apache.iceberg.MetadataTableType
    jspark = spark._jsparkSession
    deletes = DataFrame(util.loadMetadataTable(jspark, table, kinds.DELETE_FILES), spark)
    data = DataFrame(util.loadMetadataTable(jspark, table, kinds.DATA_FILES), spark)
    lower = F.element_at("lower_bounds", DELETE_FILE_PATH_FIELD_ID)
    upper = F.element_at("upper_bounds", DELETE_FILE_PATH_FIELD_ID)
    named = (
        deletes.where((F.col("content") == 1) & (F.upper(F.col("file_format")) != "PUFFIN"))
        .select(
            F.coalesce(
                F.col("referenced_data_file"), F.when(lower == upper, F.decode(lower, "UTF-8"))
            ).alias("referenced")
        )
        .where(F.col("referenced").isNotNull())
    )
    live = data.select(F.col("file_path").alias("referenced"))
    return named.join(live, "referenced", "left_anti").count()


# Expiry (task type `cleanup`; docs/decisions/0051-driver-side-expiry-for-small-tables.md). A
# table under the bound expires with Iceberg core's RemoveSnapshots in the driver (no Spark
# job: 0.04 CPU-s where the Spark action takes 1.8, bench/results/task-cost-warm-2026-12-04.md);
# at or above it with Spark's ExpireSnapshotsSparkAction, which reads the manifests and deletes
# the files on the executors. Both expire the same snapshots: the action itself commits the
# expiry through RemoveSnapshots with the same cutoff and count.

#: Live files (data + delete files of the current snapshot, the before figures) under which a
#: cleanup expires in the driver. The driver then reads the expired snapshots' manifests and
#: deletes what they alone held: at 20,000 live files a handful of manifests (Iceberg packs
#: thousands of entries into one). `--driver-expiry-max-files` overrides it. 20,000: the
#: largest size measured, where the driver still cost a tenth of Spark's action, on local disk
#: and on S3 (bench/results/driver-bound-2026-12-05.md); where it stops being cheaper was not
#: reached.
DRIVER_EXPIRY_MAX_FILES = 20_000
EXPIRY_KINDS = (
    "deletedDataFiles",
    "deletedPositionDeleteFiles",
    "deletedEqualityDeleteFiles",
    "deletedManifests",
    "deletedManifestLists",
    "deletedStatisticsFiles",
)


def runs_in_driver(before: Mapping[str, Any], max_files: int) -> bool:
    """Whether a task's work runs with Iceberg core in the driver (a cleanup's expiry, a merge's
    dangling-delete removal): the table's live files (its before figures: data + delete files of
    the current snapshot) are under `max_files`."""
    return before["dataFiles"] + before["deleteFiles"] < max_files


def classify_deleted(
    deleted: list[str],
    manifest_lists: set[str],
    statistics_files: set[str],
    manifests: set[str],
    delete_files: Mapping[str, str],
) -> dict[str, int]:
    """The deleted paths counted by kind, as the Spark action reports them. `manifest_lists`,
    `statistics_files` and `manifests`: those of the snapshots before the expiry; `delete_files`:
    path → `POSITION_DELETES`/`EQUALITY_DELETES` of every delete file live in an expired
    snapshot. Every other path is a data file: a content file the expiry deletes was live in a
    snapshot it expired, so a delete file among them is in `delete_files`."""
    counts = dict.fromkeys(EXPIRY_KINDS, 0)
    for path in set(deleted):
        if path in manifest_lists:
            counts["deletedManifestLists"] += 1
        elif path in statistics_files:
            counts["deletedStatisticsFiles"] += 1
        elif path in manifests:
            counts["deletedManifests"] += 1
        elif delete_files.get(path) == "EQUALITY_DELETES":
            counts["deletedEqualityDeleteFiles"] += 1
        elif path in delete_files:
            counts["deletedPositionDeleteFiles"] += 1
        else:
            counts["deletedDataFiles"] += 1
    return counts


def run_expire(spark, table, allowed: dict[str, Any], in_driver: bool = False) -> dict[str, Any]:
    """Expires with the retention `guard_table` allowed (never the task's alone): in the driver
    (`runs_in_driver`) or with Spark's action. Snapshots that a branch or tag references are
    kept by Iceberg whatever the cutoff, on both paths (the action commits through RemoveSnapshots)."""
    if in_driver:
        counts = expire_in_driver(spark, table, allowed)
        if counts is not None:
            return {"expireSnapshots": {**counts, "ranIn": "driver"}}
    jvm = spark.sparkContext._jvm
    actions = jvm.org.apache.iceberg.spark.actions.SparkActions.get(spark._jsparkSession)
    result = (
        actions.expireSnapshots(table)
        .expireOlderThan(allowed["olderThanMs"])
        .retainLast(allowed["retainLast"])
        .execute()
    )
    return {
        "expireSnapshots": {
            "deletedDataFiles": result.deletedDataFilesCount(),
            "deletedPositionDeleteFiles": result.deletedPositionDeleteFilesCount(),
            "deletedEqualityDeleteFiles": result.deletedEqualityDeleteFilesCount(),
            "deletedManifests": result.deletedManifestsCount(),
            "deletedManifestLists": result.deletedManifestListsCount(),
            "deletedStatisticsFiles": result.deletedStatisticsFilesCount(),
            "ranIn": "spark",
        }
    }


def expire_in_driver(spark, table, allowed: dict[str, Any]) -> dict[str, int] | None:
    """Iceberg core's RemoveSnapshots with the same cutoff and count as the action. Its deletes
    are collected (a JVM `Stream.Builder` is the `Consumer<String>`: no Python callback), then
    done through the table's FileIO (in bulk where it can) and counted by kind. Snapshots,
    manifests and delete files are mapped in the JVM (`IcebergJvm`) and their values cross
    Py4J joined, so the round trips are a fixed few whatever their numbers."""
    jvm = spark.sparkContext._jvm
    x = iceberg_jvm(jvm, "expiry")
    if x is None:
        return None  # the Spark action then
    f = x.f
    snapshots = x.lists.newArrayList(table.snapshots())
    try:
        # A v1 snapshot may have no manifest list: "null" (or empty, as the old count skipped).
        manifest_lists = set(f.text_by(snapshots, x.manifest_list)) - {"null", ""}
        statistics_files = set(f.text_by(table.statisticsFiles(), x.statistics_path)) | set(
            f.text_by(table.partitionStatisticsFiles(), x.partition_statistics_path)
        )
    except ValueError as error:
        print(f"icepack_job: {_UNABLE['expiry']}: {error}", file=sys.stderr)
        return None
    collector = x.stream.builder()
    expire = reachable_cleanup(spark, x, table.expireSnapshots())
    if expire is None:
        return None  # the Spark action then: it cleans by reachability
    expire.expireOlderThan(allowed["olderThanMs"]).retainLast(allowed["retainLast"]).deleteWith(collector).commit()
    paths = collector.build().collect(f.to_list)
    deleted = f.strings_exact(paths)
    if not deleted:
        return dict.fromkeys(EXPIRY_KINDS, 0)
    # Read before the deletes: the expired snapshots' manifest lists are among them.
    left = x.hash_set(f.mapped(x.lists.newArrayList(table.snapshots()), x.snapshot_id))
    snapshots.removeIf(f.predicate(f.is_in(x.snapshot_id_handle, left)))  # the expired ones
    manifests, delete_files = expired_manifests(x, table, snapshots, set(deleted) - manifest_lists - statistics_files)
    gone = deleted_now(spark, table.io(), paths, deleted)
    return classify_deleted(gone, manifest_lists, statistics_files, manifests, delete_files)


def reachable_cleanup(spark, x: IcebergJvm, expire):
    """RemoveSnapshots set to clean up by reachability, as the Spark action does: whatever no
    retained snapshot reaches is deleted. Its default on a table with one ref, the incremental
    cleanup, keeps the files a retained snapshot deleted (a rewrite's inputs, while the rewrite
    is the snapshot kept) until that snapshot is expired too. The switch is package-private in
    Iceberg 1.10 (`withIncrementalCleanup`): reached by reflection, found on the session's first
    cleanup and kept in `x` (one call on the next ones); None (logged, looked for again on the
    next cleanup) when it is not there."""
    from py4j.protocol import Py4JJavaError

    try:
        if x.incremental_cleanup is None:
            gateway = spark.sparkContext._gateway
            jvm = spark.sparkContext._jvm
            types = gateway.new_array(jvm.java.lang.Class, 1)
            types[0] = jvm.java.lang.Boolean.TYPE
            method = expire.getClass().getDeclaredMethod("withIncrementalCleanup", types)
            method.setAccessible(True)
            values = gateway.new_array(jvm.java.lang.Object, 1)
            values[0] = False
            x.incremental_cleanup = (method, values)
        method, values = x.incremental_cleanup
        method.invoke(expire, values)
    except Py4JJavaError as error:
        print(f"icepack_job: Iceberg's reachable cleanup cannot be chosen: {error.java_exception}", file=sys.stderr)
        return None
    return expire


def expired_manifests(x: IcebergJvm, table, expired, candidates: set[str]) -> tuple[set[str], dict[str, str]]:
    """The manifests of the `expired` snapshots (a Java list), and each delete file live in one
    of their delete manifests with its content. Delete manifests are read only when a deleted
    path is left that is not a manifest: a content file. All in the JVM: the manifest lists are
    read by a mapping, the manifests made unique by path, the delete manifests read by
    `live_delete_entries`."""
    from py4j.java_gateway import get_method

    f, io = x.f, table.io()
    listed = x.iterables.concat(f.mapped(expired, f.of(f.with_args(x.all_manifests, 1, io))))
    by_path = x.lists.newArrayList(listed).stream().collect(x.unique_by_path)
    # Py4J wraps a Java Map as a Python mapping, whose `values()` would iterate it in Python.
    unique = x.lists.newArrayList(get_method(by_path, "values")())
    manifests = set(f.text_exact(unique, x.manifest_path))
    delete_files: dict[str, str] = {}
    if not candidates - manifests:
        return manifests, delete_files
    delete_manifests = unique.stream().filter(x.is_delete_manifest).collect(f.to_list)
    if delete_manifests.size() == 0:
        return manifests, delete_files
    live = live_delete_entries(x, io, table.specs(), delete_manifests)
    delete_files = dict(zip(f.text_exact(live, x.location), f.text_by(live, x.content), strict=True))
    return manifests, delete_files


def deleted_now(spark, io, paths, deleted: list[str]) -> list[str]:
    """Deletes `paths` (a Java list; `deleted` the same as Python strings) through the table's
    FileIO: in one bulk call where the FileIO supports it, else one by one. A failed delete is
    logged and not counted, as Iceberg does (the expiry is committed; the file is an orphan)."""
    from py4j.java_gateway import is_instance_of
    from py4j.protocol import Py4JJavaError

    gateway = spark.sparkContext._gateway
    if is_instance_of(gateway, io, "org.apache.iceberg.io.SupportsBulkOperations"):
        try:
            io.deleteFiles(paths)
            return deleted
        except Py4JJavaError as error:
            # Which of them failed is not said: each is tried again on its own.
            print(
                f"icepack_job: bulk delete after expiry failed, deleting one by one: {error.java_exception}",
                file=sys.stderr,
            )
    gone = []
    for path in deleted:
        try:
            io.deleteFile(path)
            gone.append(path)
        except Py4JJavaError as error:
            print(f"icepack_job: cannot delete {path} after expiry: {error.java_exception}", file=sys.stderr)
    return gone


# ---------------------------------------------------------------------------------------------
# Orphan files (task type `orphans`; docs/decisions/0032-orphan-files.md). Files under the
# table's location that nothing of the table references, older than the cutoff, are moved to a
# quarantine inside the location, `<location>/.icepack-quarantine/<run>/<relative path>`, with a
# manifest written before anything moves; a later run deletes a run's quarantine once its window
# has passed; `--restore-run` puts a run's files back. Iceberg's DeleteOrphanFiles action finds
# the orphans (its listing, reachability and scheme handling), with a consumer that only collects
# what it would delete; the moves are the job's own, through the table's FileIO.

QUARANTINE_DIR = ".icepack-quarantine"
QUARANTINE_MANIFEST = "manifest.json"
DAY_MS = 24 * 60 * 60 * 1000
# Never younger: a writer's files exist before its commit names them, and no writer takes a day
# between the two. Same floor as Iceberg's remove_orphan_files procedure and the planner's.
ORPHAN_MIN_AGE_FLOOR_MS = DAY_MS
ORPHAN_MIN_AGE_KEY = "icepack.orphan.min-age"
ORPHAN_QUARANTINE_WINDOW_KEY = "icepack.orphan.quarantine-window"
# Table properties by which another table's files may live outside `<location>/data|metadata`.
_TABLE_PATH_KEYS = ("write.data.path", "write.metadata.path", "write.object-storage.path", "write.folder-storage.path")
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)?")
_DURATION_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": DAY_MS}


def parse_duration_ms(text: str) -> int | None:
    """`100ms`, `30s`, `5m`, `1h`, `2d` or bare milliseconds, as @icepack/runtime parses them;
    None when unreadable."""
    match = _DURATION.fullmatch(text.strip())
    if match is None:
        return None
    return round(float(match.group(1)) * _DURATION_UNIT_MS[match.group(2) or "ms"])


def orphan_limits(properties: Mapping[str, str], task_params: dict[str, Any], now_ms: int) -> dict[str, int]:
    """The cutoff and quarantine window the job applies: the more conservative of the task's and
    the table's own (`icepack.orphan.*`), and never a cutoff younger than the one-day floor."""
    min_age = ORPHAN_MIN_AGE_FLOOR_MS
    own = parse_duration_ms(properties.get(ORPHAN_MIN_AGE_KEY) or "")
    if own is not None:
        min_age = max(min_age, own)
    task_cutoff = parse_instant_ms(task_params["olderThan"], "task.parameters.olderThan")
    window = task_params["quarantineWindowMs"]
    own_window = parse_duration_ms(properties.get(ORPHAN_QUARANTINE_WINDOW_KEY) or "")
    if own_window is not None:
        window = max(window, own_window)
    return {"olderThanMs": max(0, min(task_cutoff, now_ms - min_age)), "quarantineWindowMs": window}


def _norm_location(location: str) -> str:
    """A location compared as a prefix: no trailing slash, `s3a://`/`s3n://` as `s3://`, `file:///x`
    as `file:/x` (Hadoop and Iceberg write both)."""
    text = location.rstrip("/")
    for alias in ("s3a://", "s3n://"):
        if text.startswith(alias):
            text = "s3://" + text[len(alias):]
    if text.startswith("file:///"):
        text = "file:/" + text[len("file:///"):]
    return text


def is_under(path: str, location: str) -> bool:
    """Is `path` strictly inside `location` (by whole path segments)?"""
    return _norm_location(path).startswith(_norm_location(location) + "/")


def other_table_roots(location: str, properties: Mapping[str, str]) -> list[str]:
    """Where a table writes its files: its data and metadata directories (Iceberg's defaults
    under its location unless its properties move them) and any object-storage path."""
    base = location.rstrip("/")
    roots = [properties.get("write.data.path") or f"{base}/data", properties.get("write.metadata.path") or f"{base}/metadata"]
    roots += [properties[key] for key in _TABLE_PATH_KEYS[2:] if properties.get(key)]
    return roots


def excluded_prefixes(name: str, own_location: str, others: list[dict[str, Any]]) -> list[str]:
    """The prefixes under the table's location that hold other tables' files (nested tables,
    or data paths pointing into it): never listed as orphans. `others`: the catalog's other
    tables, `{"name", "location", "properties"}`. Raises Refused when another table shares the
    location itself, or is a parent whose own files may lie anywhere in it: no prefix then
    tells whose a file is."""
    own = _norm_location(own_location)
    out: list[str] = []
    for other in others:
        location = other["location"]
        if _norm_location(location) == own:
            raise Refused(
                f"{name} shares its location {own_location} with table {other['name']}: whose files "
                "are orphans cannot be told; nothing done"
            )
        if is_under(location, own_location):
            # A nested table: its whole location is its own.
            out.append(_norm_location(location))
        for root in other_table_roots(location, other.get("properties") or {}):
            if _norm_location(root) == own or is_under(own_location, root):
                raise Refused(
                    f"{name} lies in {root}, where table {other['name']} writes its files: whose files "
                    "are orphans cannot be told; nothing done"
                )
            if is_under(root, own_location):
                out.append(_norm_location(root))
    # A prefix inside another excluded prefix adds nothing.
    return sorted({p for p in out if not any(is_under(p, q) for q in out)})


def orphan_candidates(paths: list[str], location: str, excluded: list[str]) -> list[str]:
    """The orphans the job may move: inside the location, not in a quarantine, not another's."""
    out = []
    for path in paths:
        if not is_under(path, location):
            continue
        relative = _norm_location(path)[len(_norm_location(location)) + 1:]
        if relative.split("/")[0] == QUARANTINE_DIR or f"/{QUARANTINE_DIR}/" in f"/{relative}":
            continue
        if any(is_under(path, prefix) or _norm_location(path) == prefix for prefix in excluded):
            continue
        out.append(path)
    return sorted(out)


def quarantine_root(location: str) -> str:
    return location.rstrip("/") + "/" + QUARANTINE_DIR


def quarantine_path(location: str, run_id: str, path: str) -> str:
    """`<location>/.icepack-quarantine/<run>/<path relative to the location>`."""
    if not is_under(path, location):
        raise ValueError(f"{path} is not under {location}")
    relative = _norm_location(path)[len(_norm_location(location)) + 1:]
    return f"{quarantine_root(location)}/{run_id}/{relative}"


def new_run_id(now_ms: int) -> str:
    """Sortable by time, unique: `20261202T221500Z-3fa9c1`."""
    stamp = datetime.fromtimestamp(now_ms // 1000, tz=timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{os.urandom(3).hex()}"


_RUN_ID = re.compile(r"[0-9]{8}T[0-9]{6}Z-[0-9a-f]{6}")


class LocalStore:
    """Files on the local filesystem (`file:` URIs or paths): the unit tests' store, and the
    shape FileIOStore gives the table's storage."""

    @staticmethod
    def _os(path: str) -> str:
        if path.startswith("file://"):
            return path[len("file://"):]
        return path[len("file:"):] if path.startswith("file:") else path

    def list(self, prefix: str) -> list[tuple[str, int]]:
        root = self._os(prefix)
        out = []
        for directory, _, files in os.walk(root):
            for name in files:
                full = os.path.join(directory, name)
                out.append((prefix.rstrip("/") + full[len(root.rstrip("/")):], os.path.getsize(full)))
        return out

    def size(self, path: str) -> int | None:
        try:
            return os.path.getsize(self._os(path))
        except OSError:
            return None

    def copy(self, source: str, target: str) -> None:
        target_os = self._os(target)
        os.makedirs(os.path.dirname(target_os), exist_ok=True)
        with open(self._os(source), "rb") as src, open(target_os, "xb") as dst:
            while chunk := src.read(1 << 20):
                dst.write(chunk)

    def delete(self, path: str) -> None:
        os.remove(self._os(path))

    def read_text(self, path: str) -> str:
        with open(self._os(path), encoding="utf-8") as fh:
            return fh.read()

    def write_text(self, path: str, text: str) -> None:
        target = self._os(path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target + ".tmp", "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(target + ".tmp", target)


def lists_prefixes(io) -> bool:
    """Does this FileIO list a prefix (Iceberg's SupportsPrefixOperations: S3FileIO, HadoopFileIO,
    ResolvingFileIO)? By the Java class's interfaces, walked up its superclasses and their
    super-interfaces."""
    wanted = "org.apache.iceberg.io.SupportsPrefixOperations"
    pending = [io.getClass()]
    while pending:
        cls = pending.pop()
        if cls is None:
            continue
        if cls.getName() == wanted:
            return True
        pending.append(cls.getSuperclass())
        pending.extend(cls.getInterfaces())
    return False


class FileIOStore:
    """The table's own storage through its Iceberg FileIO (S3FileIO, HadoopFileIO, …): the
    catalog's credentials, no second client configuration."""

    def __init__(self, spark, io) -> None:
        self._jvm = spark.sparkContext._jvm
        self._io = io

    def list(self, prefix: str) -> list[tuple[str, int]]:
        if not lists_prefixes(self._io):
            raise JobError("failed", f"the table's FileIO {self._io.getClass().getName()} cannot list a prefix")
        out = []
        iterator = self._io.listPrefix(prefix).iterator()
        while iterator.hasNext():
            info = iterator.next()
            out.append((str(info.location()), int(info.size())))
        return out

    def size(self, path: str) -> int | None:
        file = self._io.newInputFile(path)
        return int(file.getLength()) if file.exists() else None

    def copy(self, source: str, target: str) -> None:
        out_file = self._io.newOutputFile(target)
        stream_in = self._io.newInputFile(source).newStream()
        try:
            stream_out = out_file.create()
            try:
                self._jvm.org.apache.iceberg.relocated.com.google.common.io.ByteStreams.copy(stream_in, stream_out)
            finally:
                stream_out.close()
        finally:
            stream_in.close()

    def delete(self, path: str) -> None:
        self._io.deleteFile(path)

    def read_text(self, path: str) -> str:
        stream = self._io.newInputFile(path).newStream()
        try:
            data = self._jvm.org.apache.iceberg.relocated.com.google.common.io.ByteStreams.toByteArray(stream)
        finally:
            stream.close()
        return bytes(data).decode("utf-8")

    def write_text(self, path: str, text: str) -> None:
        # createOrOverwrite: the manifest is rewritten once the moves are done.
        stream = self._io.newOutputFile(path).createOrOverwrite()
        try:
            stream.write(bytearray(text.encode("utf-8")))
        finally:
            stream.close()


def _write_manifest(store, path: str, manifest: dict[str, Any]) -> None:
    store.write_text(path, json.dumps(manifest, indent=1, sort_keys=True))


def quarantine_orphans(
    store, table: dict[str, Any], location: str, orphans: list[str], now_ms: int, older_than_ms: int,
    max_files: int, still_referenced=lambda paths: set(),
) -> dict[str, Any]:
    """Moves `orphans` (at most `max_files`) into a new quarantine run. The run's manifest is
    written before the first move, naming every planned move, and again at the end with what
    moved: a crash leaves a manifest that restore and purge can still follow. Each file is
    copied, its copy's size checked, then the original deleted; one that fails stays where it was.
    `still_referenced(paths)` is asked just before the moves (the table reloaded): a file it
    names is left alone."""
    chosen = orphans[:max_files]
    referenced = still_referenced(chosen) if chosen else set()
    chosen = [path for path in chosen if path not in referenced]
    out: dict[str, Any] = {
        "found": len(orphans),
        "quarantined": 0,
        "quarantinedBytes": 0,
        "failed": 0,
        "referencedAgain": len(referenced),
        "deferred": max(0, len(orphans) - max_files),
        "run": None,
    }
    if not chosen:
        return out
    run_id = new_run_id(now_ms)
    manifest_path = f"{quarantine_root(location)}/{run_id}/{QUARANTINE_MANIFEST}"
    entries = [{"path": path, "quarantinePath": quarantine_path(location, run_id, path), "state": "planned"} for path in chosen]
    manifest = {
        "version": 1,
        "run": run_id,
        "table": table["table"],
        "tableUuid": table["uuid"],
        "location": location,
        "quarantinedAt": format_instant_ms(now_ms),
        "olderThan": format_instant_ms(older_than_ms),
        "complete": False,
        "files": entries,
    }
    _write_manifest(store, manifest_path, manifest)
    for entry in entries:
        try:
            size = store.size(entry["path"])
            if size is None:
                entry["state"] = "gone"
                continue
            store.copy(entry["path"], entry["quarantinePath"])
            if store.size(entry["quarantinePath"]) != size:
                raise OSError(f"the copy of {entry['path']} has another size")
            store.delete(entry["path"])
            entry.update(state="quarantined", size=size)
            out["quarantined"] += 1
            out["quarantinedBytes"] += size
        except Exception as error:  # noqa: BLE001 — one file's failure leaves it in place
            entry.update(state="failed", error=str(error)[:200])
            out["failed"] += 1
    manifest["complete"] = True
    _write_manifest(store, manifest_path, manifest)
    out.update(run=run_id, manifest=manifest_path)
    return out


def _quarantine_runs(store, location: str) -> dict[str, str]:
    """run id → manifest path of the quarantine runs under the location."""
    root = quarantine_root(location)
    runs = {}
    for path, _ in store.list(root):
        rest = path[len(root) + 1:] if path.startswith(root + "/") else ""
        parts = rest.split("/")
        if len(parts) == 2 and parts[1] == QUARANTINE_MANIFEST and _RUN_ID.fullmatch(parts[0]):
            runs[parts[0]] = path
    return runs


def _read_manifest(store, path: str, table_uuid: str) -> dict[str, Any]:
    manifest = json.loads(store.read_text(path))
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), list):
        raise ValueError(f"{path} is not a quarantine manifest")
    if manifest.get("tableUuid") != table_uuid:
        raise Refused(f"{path} belongs to table {manifest.get('tableUuid')}, not {table_uuid}; not touched")
    return manifest


def purge_quarantine(store, location: str, table_uuid: str, now_ms: int, window_ms: int) -> dict[str, Any]:
    """Deletes the quarantine runs whose window has passed: their files, then their manifest
    (last, so a cut-short purge is finished by the next run). A run whose manifest cannot be
    read, or names another table, is left alone and counted."""
    out = {"purgedRuns": 0, "purgedFiles": 0, "purgedBytes": 0, "keptRuns": 0, "unreadableRuns": 0}
    for run_id, manifest_path in sorted(_quarantine_runs(store, location).items()):
        try:
            manifest = _read_manifest(store, manifest_path, table_uuid)
            quarantined_at = parse_instant_ms(manifest["quarantinedAt"], "quarantinedAt")
        except Exception:  # noqa: BLE001 — never delete what cannot be read
            out["unreadableRuns"] += 1
            continue
        if now_ms < quarantined_at + window_ms:
            out["keptRuns"] += 1
            continue
        prefix = f"{quarantine_root(location)}/{run_id}/"
        for entry in manifest["files"]:
            target = entry.get("quarantinePath")
            # Only inside the run's own directory, whatever the manifest says.
            if not isinstance(target, str) or not target.startswith(prefix):
                continue
            size = store.size(target)
            if size is not None:
                store.delete(target)
                out["purgedFiles"] += 1
                out["purgedBytes"] += size
        store.delete(manifest_path)
        out["purgedRuns"] += 1
    return out


def restore_quarantine(store, location: str, table_uuid: str, run_id: str) -> dict[str, Any]:
    """Puts a quarantine run's files back where they were (copy back, check, delete the copy),
    then deletes its manifest. A file whose original path exists again is left in quarantine
    and counted (never overwritten); one the quarantine lacks is counted missing."""
    if _RUN_ID.fullmatch(run_id) is None:
        raise BadInput(f"--restore-run {run_id!r} is not a quarantine run id (YYYYMMDDTHHMMSSZ-xxxxxx)")
    manifest_path = f"{quarantine_root(location)}/{run_id}/{QUARANTINE_MANIFEST}"
    if store.size(manifest_path) is None:
        raise BadInput(f"no quarantine run {run_id} under {location} (no {manifest_path})")
    manifest = _read_manifest(store, manifest_path, table_uuid)
    out = {"run": run_id, "restored": 0, "restoredBytes": 0, "alreadyPresent": 0, "missing": 0}
    prefix = f"{quarantine_root(location)}/{run_id}/"
    kept = False
    for entry in manifest["files"]:
        source, target = entry.get("quarantinePath"), entry.get("path")
        if not (isinstance(source, str) and source.startswith(prefix) and isinstance(target, str) and is_under(target, location)):
            continue
        size = store.size(source)
        if size is None:
            out["missing"] += 1
            continue
        if store.size(target) is not None:
            out["alreadyPresent"] += 1
            kept = True
            continue
        store.copy(source, target)
        if store.size(target) != size:
            raise JobError("io", f"the restored copy of {target} has another size; the quarantined file is kept")
        store.delete(source)
        out["restored"] += 1
        out["restoredBytes"] += size
    if not kept:
        store.delete(manifest_path)
    return out


def _each(java_iterable) -> Any:
    """Python iteration over any Java Iterable (py4j converts Lists, not every Iterable)."""
    iterator = java_iterable.iterator()
    while iterator.hasNext():
        yield iterator.next()


def referenced_since(table, snapshot_id: str | None) -> Any:
    """A function: of `paths`, those the table (reloaded) references through commits made after
    `snapshot_id` — their metadata files, manifest lists, manifests and added files. What the
    orphan listing could not know: a commit that landed while it ran."""

    def check(paths: list[str]) -> set[str]:
        table.refresh()
        wanted = {_norm_location(p): p for p in paths}
        found: set[str] = set()
        io = table.io()

        def see(location: str) -> None:
            key = _norm_location(str(location))
            if key in wanted:
                found.add(wanted[key])

        metadata = table.operations().current()
        see(metadata.metadataFileLocation())
        for entry in _each(metadata.previousFiles()):
            see(entry.file())
        snapshot = table.currentSnapshot()
        while snapshot is not None and str(snapshot.snapshotId()) != snapshot_id:
            see(snapshot.manifestListLocation())
            for manifest in _each(snapshot.allManifests(io)):
                see(manifest.path())
            for file in _each(snapshot.addedDataFiles(io)):
                see(file.location())
            for file in _each(snapshot.addedDeleteFiles(io)):
                see(file.location())
            parent = snapshot.parentId()
            snapshot = None if parent is None else table.snapshot(parent)
        return found

    return check


def catalog_tables(spark, catalog_name: str, own: list[str]) -> list[dict[str, Any]]:
    """Every other table of the catalog with its location and properties: the tables whose
    files may lie in this table's location. A table or namespace dropped meanwhile is skipped;
    any other failure to read one fails the run (it might be a table nested here)."""
    jvm = spark.sparkContext._jvm
    catalog = spark._jsparkSession.sessionState().catalogManager().catalog(catalog_name).icebergCatalog()
    out: list[dict[str, Any]] = []
    pending = [jvm.org.apache.iceberg.catalog.Namespace.empty()]
    while pending:
        namespace = pending.pop()
        try:
            pending.extend(_each(catalog.listNamespaces(namespace)))
            idents = [] if len(namespace.levels()) == 0 else list(_each(catalog.listTables(namespace)))
        except Exception as error:  # noqa: BLE001 — a namespace dropped meanwhile has no tables
            if "NoSuchNamespace" not in "".join(name for name, _ in java_chain(error)):
                raise
            continue
        for ident in idents:
            name = [*list(ident.namespace().levels()), str(ident.name())]
            if name == own:
                continue
            try:
                other = catalog.loadTable(ident)
            except Exception as error:  # noqa: BLE001 — only a table dropped meanwhile is skipped:
                # one that cannot be read may have files here, so the run fails instead.
                if "NoSuchTable" not in "".join(name for name, _ in java_chain(error)):
                    raise
                continue
            out.append({"name": ".".join(name), "location": str(other.location()), "properties": dict(other.properties())})
    return out


def find_orphans(spark, table, older_than_ms: int) -> list[str]:
    """Iceberg's DeleteOrphanFiles action, deleting nothing: its consumer only collects (a
    Stream.Builder is a Consumer<String>) and its result lists the orphans. Prefix listing
    through the table's FileIO where it can (S3FileIO), else Hadoop's file system listing."""
    jvm = spark.sparkContext._jvm
    actions = jvm.org.apache.iceberg.spark.actions.SparkActions.get(spark._jsparkSession)
    collect = jvm.java.util.stream.Stream.builder()
    action = actions.deleteOrphanFiles(table).location(table.location()).olderThan(older_than_ms).deleteWith(collect)
    if lists_prefixes(table.io()):
        action = action.usePrefixListing(True)
    result = action.execute()
    return [str(path) for path in _each(result.orphanFileLocations())]


def run_orphans(
    spark, catalog_name: str, table, task: dict[str, Any], limits: dict[str, int], now_ms: int, before_moves=None
) -> dict[str, Any]:
    """Purges the quarantine runs past their window, then quarantines the orphans older than
    the cutoff, leaving other tables' files alone (excluded_prefixes). `before_moves` (tests):
    called with the candidates after the listing, before anything moves."""
    name = [*task["table"]["namespace"], task["table"]["name"]]
    location = str(table.location())
    store = FileIOStore(spark, table.io())
    uuid = str(table.uuid())
    others = catalog_tables(spark, catalog_name, name)
    excluded = excluded_prefixes(".".join(name), location, others)
    purged = purge_quarantine(store, location, uuid, now_ms, limits["quarantineWindowMs"])
    snapshot = table.currentSnapshot()
    start = None if snapshot is None else str(snapshot.snapshotId())
    orphans = orphan_candidates(find_orphans(spark, table, limits["olderThanMs"]), location, excluded)
    if before_moves is not None:
        before_moves(orphans)
    moved = quarantine_orphans(
        store,
        {"table": task["table"], "uuid": uuid},
        location,
        orphans,
        now_ms,
        limits["olderThanMs"],
        task["parameters"]["maxFiles"],
        referenced_since(table, start),
    )
    return {
        "orphans": {
            **moved,
            **purged,
            "olderThan": format_instant_ms(limits["olderThanMs"]),
            "quarantineWindowMs": limits["quarantineWindowMs"],
            "excludedPrefixes": len(excluded),
        }
    }


def restore_run(spark, args: argparse.Namespace, task: dict[str, Any]) -> dict[str, Any]:
    """`--restore-run RUN`: the task names the table; its UUID must match the manifest's."""
    args.catalog_name = args.catalog_name or task["table"]["catalog"]
    table = load_table(spark, args.catalog_name, task["table"])
    if is_metadata_table(table):
        raise Refused("a metadata table has no quarantine")
    uuid = str(table.uuid())
    if uuid != task["state"]["tableUuid"]:
        raise Refused(f"the table's UUID is {uuid}, the task's {task['state']['tableUuid']}; nothing restored")
    restored = restore_quarantine(FileIOStore(spark, table.io()), str(table.location()), uuid, args.restore_run)
    return {"ok": True, "taskId": task["id"], "type": "restore", "exitCode": ExitCode.OK, "restore": restored}


# ---------------------------------------------------------------------------------------------
# Hilbert-curve layout (sort strategy `hilbert`; docs/decisions/0033-hilbert-layout.md).
# Iceberg's rewrite action offers sort and z-order only, so a Hilbert rewrite runs Iceberg's own
# pieces around another sort key: BinPackRewriteFilePlanner picks the file groups (what the
# z-order action's planner is, with its compression factor at its default of 1); each group is
# read as a staged file-scan-task set, sorted by its Hilbert index and written as the rewrite of
# that set; RewriteDataFilesCommitManager commits them as one RewriteFiles validated from the
# starting snapshot, with the starting sequence number. A concurrent delete or overwrite of a
# rewritten file fails that commit (the new files are deleted) instead of bringing rows back.

HILBERT_DIMENSIONS = 2
# Cells per axis: 2^16, so an index fits 32 bits. Finer cells change nothing for files of
# thousands of rows or more.
HILBERT_BITS = 16
# Iceberg types whose values map monotonically onto a double (the scale to cells).
HILBERT_TYPES = ("INTEGER", "LONG", "FLOAT", "DOUBLE", "DECIMAL", "DATE", "TIMESTAMP")
_HILBERT_KEY = "__icepack_hilbert"
_MAX_DOUBLE = "1.7976931348623157E308D"


def hilbert_index(x: int, y: int, bits: int = HILBERT_BITS) -> int:
    """The position of cell (x, y) on the Hilbert curve over a 2^bits × 2^bits grid (the
    classic xy2d). hilbert_index_sql is this, step for step, in Spark SQL."""
    last = (1 << bits) - 1
    d = 0
    for i in range(bits - 1, -1, -1):
        s = 1 << i
        rx = 1 if x & s else 0
        ry = 1 if y & s else 0
        d += s * s * ((3 * rx) ^ ry)
        if ry == 0:
            # Rotate the quadrant: flip it when rx, then swap x and y.
            x, y = (last - y, last - x) if rx == 1 else (y, x)
    return d


def hilbert_index_sql(x_sql: str, y_sql: str, bits: int = HILBERT_BITS) -> str:
    """Spark SQL for hilbert_index of two BIGINT cell expressions: a fold over the bits from the
    highest down (`aggregate`), so no Python UDF (and no pandas) runs per row."""
    last = (1 << bits) - 1
    s = "shiftleft(CAST(1 AS BIGINT), i)"
    rx = f"IF((acc.x & {s}) != 0, 1, 0)"
    ry = f"IF((acc.y & {s}) != 0, 1, 0)"
    return (
        f"aggregate(sequence({bits - 1}, 0, -1), "
        f"named_struct('x', CAST({x_sql} AS BIGINT), 'y', CAST({y_sql} AS BIGINT), 'd', CAST(0 AS BIGINT)), "
        "(acc, i) -> named_struct("
        f"'x', IF({ry} = 0, IF({rx} = 1, {last} - acc.y, acc.y), acc.x), "
        f"'y', IF({ry} = 0, IF({rx} = 1, {last} - acc.x, acc.x), acc.y), "
        f"'d', acc.d + {s} * {s} * ((3 * {rx}) ^ {ry})), "
        "acc -> acc.d)"
    )


def hilbert_columns(
    columns: list[str], types: Mapping[str, str], wanted: list[str], where: str = "task.parameters.columns"
) -> list[tuple[int, str]]:
    """(position in `columns`, Iceberg type id) of each wanted column: a top-level column of a
    type with an order that maps onto numbers (HILBERT_TYPES). The name as written, else the one
    column it names ignoring case (as Spark resolves it by default). Raises BadInput naming the
    column otherwise."""
    out: list[tuple[int, str]] = []
    for i, name in enumerate(wanted):
        if name in columns:
            position = columns.index(name)
        else:
            matches = [p for p, c in enumerate(columns) if c.lower() == name.lower()]
            if len(matches) != 1:
                raise BadInput(f"{where}[{i}].name {name!r} is not a top-level column of the table")
            position = matches[0]
        type_id = types.get(columns[position], "")
        if type_id not in HILBERT_TYPES:
            raise BadInput(
                f"{where}[{i}].name {name!r} is of type {type_id.lower() or 'unknown'}; a Hilbert "
                "layout needs numbers, dates or timestamps"
            )
        out.append((position, type_id))
    if len({p for p, _ in out}) != len(out):
        raise BadInput(f"{where} names one column twice")
    return out


def hilbert_value_sql(column_sql: str, type_id: str) -> str:
    """The column as a double that orders as the column does."""
    if type_id == "DATE":
        return f"CAST(unix_date({column_sql}) AS DOUBLE)"
    if type_id == "TIMESTAMP":
        # With or without a zone: the cast to TIMESTAMP is a no-op for the former.
        return f"CAST(unix_micros(CAST({column_sql} AS TIMESTAMP)) AS DOUBLE)"
    return f"CAST({column_sql} AS DOUBLE)"


def hilbert_bounds_sql(value_sql: str) -> tuple[str, str]:
    """Aggregates for the least and greatest finite value (NaN and ±Infinity left out)."""
    finite = f"CASE WHEN {value_sql} BETWEEN -{_MAX_DOUBLE} AND {_MAX_DOUBLE} THEN {value_sql} END"
    return f"min({finite})", f"max({finite})"


def _double_sql(value: float) -> str:
    return f"({value:.17E}D)"


def hilbert_scale_sql(value_sql: str, lo: float | None, hi: float | None, bits: int = HILBERT_BITS) -> str:
    """The cell (0 … 2^bits − 1) of a value between `lo` and `hi`, the group's finite bounds:
    null first (0), NaN and +Infinity last, −Infinity first. One cell for all when the group
    has one value (or none) in that column."""
    last = (1 << bits) - 1
    if lo is None or hi is None or not math.isfinite(lo) or not math.isfinite(hi) or hi <= lo:
        return "CAST(0 AS BIGINT)"
    per_unit = last / (hi - lo)
    if not math.isfinite(per_unit) or per_unit == 0:
        return "CAST(0 AS BIGINT)"
    # greatest/least skip nulls and put NaN above everything, as Spark orders it.
    scaled = f"({value_sql} - {_double_sql(lo)}) * {_double_sql(per_unit)}"
    return (
        f"CASE WHEN {value_sql} IS NULL THEN CAST(0 AS BIGINT) "
        f"ELSE CAST(floor(least({last}.0D, greatest(0.0D, {scaled}))) AS BIGINT) END"
    )


def _java_map(jvm, values: Mapping[str, str]):
    out = jvm.java.util.HashMap()
    for key, value in values.items():
        out.put(key, value)
    return out


# The rewrite_options that Iceberg's file planner reads (the others are the action's).
_PLANNER_OPTIONS = (
    "target-file-size-bytes",
    "min-file-size-bytes",
    "max-file-size-bytes",
    "min-input-files",
    "delete-file-threshold",
)


def _table_cache(spark):
    """Iceberg's SparkTableCache, where a read or write by a group id finds its table. Through
    reflection: the class has a static get() beside an instance get(String), and py4j finds
    only the instance one by name."""
    jvm = spark.sparkContext._jvm
    gateway = spark.sparkContext._gateway
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    cls = jvm.java.lang.Class.forName("org.apache.iceberg.spark.SparkTableCache", True, loader)
    getter = cls.getMethod("get", gateway.new_array(jvm.java.lang.Class, 0))
    return getter.invoke(None, gateway.new_array(jvm.java.lang.Object, 0))


def _hilbert_write_group(spark, table, group, wanted: list[str]) -> Any:
    """Writes one file group sorted by its Hilbert index, as Iceberg's shuffling rewrite runner
    does (SparkDataFileRewriteRunner.rewrite + SparkShufflingFileRewriteRunner.doRewrite): the
    group's scan tasks staged under an id, read back by that id, written with
    `rewritten-file-scan-task-set-id` so the writer stages the new files instead of committing.
    Returns the new files (a Java Set of DataFile)."""
    import uuid

    from pyspark.sql import functions as F

    jvm = spark.sparkContext._jvm
    group_id = str(uuid.uuid4())
    cache = _table_cache(spark)
    tasks = jvm.org.apache.iceberg.spark.ScanTaskSetManager.get()
    coordinator = jvm.org.apache.iceberg.spark.FileRewriteCoordinator.get()
    cache.add(group_id, table)
    tasks.stageTasks(table, group_id, group.fileScanTasks())
    try:
        scan = spark.read.format("iceberg").option("scan-task-set-id", group_id).load(group_id)
        names = scan.columns
        types = {str(f.name()): str(f.type().typeId().name()) for f in table.schema().columns()}
        positions = hilbert_columns(names, types, wanted)
        # Positional internal names: the task's column names are never spliced into SQL, and
        # toDF renames by position without parsing either way.
        internal = scan.toDF(*[f"__icepack_c{i}" for i in range(len(names))])
        values = [hilbert_value_sql(f"__icepack_c{p}", t) for p, t in positions]
        bounds = internal.selectExpr(*[a for v in values for a in hilbert_bounds_sql(v)]).collect()[0]
        cells = [hilbert_scale_sql(v, bounds[2 * k], bounds[2 * k + 1]) for k, v in enumerate(values)]
        ordered = (
            internal.withColumn(_HILBERT_KEY, F.expr(hilbert_index_sql(*cells)))
            .repartitionByRange(max(1, group.expectedOutputFiles()), F.col(_HILBERT_KEY))
            .sortWithinPartitions(F.col(_HILBERT_KEY))
            .drop(_HILBERT_KEY)
            .toDF(*names)
        )
        (
            ordered.write.format("iceberg")
            .option("rewritten-file-scan-task-set-id", group_id)
            .option("target-file-size-bytes", str(group.maxOutputFileSize()))
            .option("use-table-distribution-and-ordering", "false")
            .option("output-spec-id", str(group.outputSpecId()))
            # A group of files of an older spec is written to the current one unclustered.
            .option("fanout-enabled", "true")
            .mode("append")
            .save(group_id)
        )
        return coordinator.fetchNewFiles(table, group_id)
    finally:
        cache.remove(group_id)
        tasks.removeTasks(table, group_id)
        coordinator.clearRewrite(table, group_id)


def run_hilbert_rewrite(spark, table, params: dict[str, Any], where, before_commit=None) -> dict[str, Any]:
    """The Hilbert rewrite of the files `where` selects (None: all), with the task's size
    options. Without partial progress one commit of every group; with it, up to `maxCommits`
    commits of a share of the groups each, where a commit that conflicts leaves its files
    unrewritten (`failedDataFiles`), as Iceberg's partial progress does; when every commit
    conflicts the task fails as a conflict. `before_commit` is for tests: it runs after the
    files are written, before the commit (a concurrent writer's moment)."""
    jvm = spark.sparkContext._jvm
    counts = {
        "rewrittenDataFiles": 0,
        "addedDataFiles": 0,
        "rewrittenBytes": 0,
        "failedDataFiles": 0,
        "removedDeleteFiles": 0,
    }
    wanted = [c["name"] for c in params["columns"]]
    schema = list(table.schema().columns())
    # Checked before anything is planned or read: a bad column is bad input, named.
    hilbert_columns(
        [str(f.name()) for f in schema], {str(f.name()): str(f.type().typeId().name()) for f in schema}, wanted
    )
    start = table.currentSnapshot()
    if start is None:
        return {"rewriteDataFiles": counts}
    start_id = start.snapshotId()
    actions = jvm.org.apache.iceberg.actions
    condition = where if where is not None else jvm.org.apache.iceberg.expressions.Expressions.alwaysTrue()
    case_sensitive = jvm.org.apache.iceberg.spark.SparkUtil.caseSensitive(spark._jsparkSession)
    planner = actions.BinPackRewriteFilePlanner(table, condition, start_id, case_sensitive)
    options = rewrite_options(params, None)
    planner.init(_java_map(jvm, {k: v for k, v in options.items() if k in _PLANNER_OPTIONS}))
    plan = planner.plan()
    groups = []
    iterator = plan.groups().iterator()
    while iterator.hasNext():
        groups.append(iterator.next())
    if not groups:
        return {"rewriteDataFiles": counts}
    # Iceberg's default: the rewritten files keep the starting snapshot's sequence number, so
    # equality deletes committed meanwhile still apply to them.
    commits = actions.RewriteDataFilesCommitManager(table, start_id, True)
    written = []
    try:
        for group in groups:
            group.setOutputFiles(_hilbert_write_group(spark, table, group, wanted))
            written.append(group)
    except Exception:
        for group in written:
            commits.abortFileGroup(group)
        raise
    if before_commit is not None:
        before_commit()
    progress = params.get("partialProgress") or {}
    chunks = [groups]
    if progress.get("enabled"):
        size = -(-len(groups) // progress.get("maxCommits", 10))
        chunks = [groups[i : i + size] for i in range(0, len(groups), size)]
    failure: BaseException | None = None
    for chunk in chunks:
        batch = jvm.java.util.HashSet()
        for group in chunk:
            batch.add(group)
        try:
            # Aborts (deletes the new files) on a failed commit, unless its state is unknown.
            commits.commitOrClean(batch)
        except Exception as error:  # noqa: BLE001 — a conflict of one partial commit is its own
            if len(chunks) == 1 or classify(java_chain(error)) != "commit-conflict":
                raise
            failure = error
            counts["failedDataFiles"] += sum(g.inputFileNum() for g in chunk)
            continue
        for group in chunk:
            result = group.asResult()
            counts["rewrittenDataFiles"] += result.rewrittenDataFilesCount()
            counts["addedDataFiles"] += result.addedDataFilesCount()
            counts["rewrittenBytes"] += result.rewrittenBytesCount()
            counts["removedDeleteFiles"] += group.danglingDVs().size()
    if failure is not None and counts["rewrittenDataFiles"] == 0:
        raise failure
    return {"rewriteDataFiles": counts}


# ---------------------------------------------------------------------------------------------
# The ledger's figures (docs/spark-job.md): what the run read, wrote and removed, from the
# summaries of the snapshots it committed, and the CPU time its processes used.


def stat_cpu_ticks(stat: str) -> int:
    """utime + stime (clock ticks) from a `/proc/<pid>/stat` line; comm may hold spaces and
    parentheses, so the fields are counted after the last `)`."""
    fields = stat[stat.rindex(")") + 2 :].split(" ")
    # After `)`: state is field 3 of stat(5); utime and stime are fields 14 and 15.
    return int(fields[11]) + int(fields[12])


def process_cpu_seconds(pids: list[int]) -> float | None:
    """CPU seconds the processes used so far (with their waited-for children), or None when
    /proc cannot tell (not Linux, gone)."""
    ticks = 0
    try:
        for pid in pids:
            with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
                ticks += stat_cpu_ticks(stat.read())
        return ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


# The most a listing of Spark's monitoring API may hold: a maintenance run has a few dozen
# stages and a few executors, each a few KiB.
MONITORING_RESPONSE_LIMIT = 8 * 1024 * 1024


def monitoring_list(ui_url: str, app_id: str, listing: str, timeout: float = 10.0) -> list[Mapping[str, Any]]:
    """A listing (`stages`, `allexecutors`) of the application from its driver's monitoring API,
    `/api/v1/applications/<id>/<listing>`: read within a size limit, objects only."""
    import urllib.request

    url = f"{ui_url.rstrip('/')}/api/v1/applications/{app_id}/{listing}"
    with urllib.request.urlopen(url, timeout=timeout) as answer:
        body = answer.read(MONITORING_RESPONSE_LIMIT + 1)
    if len(body) > MONITORING_RESPONSE_LIMIT:
        raise ValueError(f"{listing} listing over its size limit")
    items = json.loads(body)
    if not isinstance(items, list):
        raise ValueError(f"{listing} listing is not a list")
    return [item for item in items if isinstance(item, dict)]


def executor_cpu_seconds(stages: list[Mapping[str, Any]]) -> float:
    """CPU seconds the executors spent on the tasks of these stages (Spark's monitoring API,
    `/api/v1/applications/<id>/stages`): `executorCpuTime` + `executorDeserializeCpuTime`,
    both in nanoseconds."""
    nanos = 0
    for stage in stages:
        for key in ("executorCpuTime", "executorDeserializeCpuTime"):
            value = stage.get(key, 0)
            if isinstance(value, int) and value > 0:
                nanos += value
    return nanos / 1e9


def executors_in_driver(master: str) -> bool:
    """Local mode (`local`, `local[4]`, `local[*, 3]`) runs the executors as threads of the driver
    JVM; `local-cluster[…]`, Kubernetes and the other masters run them in JVMs of their own."""
    return master == "local" or master.startswith("local[")


def stages_settled(stages: list[Mapping[str, Any]]) -> bool:
    """True when no stage runs or waits any more: its figures are final."""
    return all(s.get("status") not in ("ACTIVE", "PENDING") and not s.get("numActiveTasks") for s in stages)


def stages_of(ui_url: str, app_id: str, timeout: float = 10.0) -> list[Mapping[str, Any]]:
    """The application's stages from its driver's monitoring API (bounded read)."""
    return monitoring_list(ui_url, app_id, "stages", timeout)


def run_cpu_seconds(spark) -> float | None:
    """The run's CPU: the driver — the Spark JVM (it launched this Python, its parent) and this
    Python — plus, on a cluster, what the executors spent on the run's tasks (Spark's
    monitoring API on the driver; in local mode the executors are threads of the driver JVM and
    already counted). None when it cannot be told (no /proc, the driver UI off on a cluster)."""
    driver = process_cpu_seconds([os.getppid(), os.getpid()])
    context = spark.sparkContext
    if driver is None or executors_in_driver(str(context.master)):
        return driver
    ui_url = context.uiWebUrl
    if not ui_url:
        return None
    try:
        # The monitoring store is fed by Spark's listener bus, after the tasks end: wait (a
        # little) until no stage of the run still shows as running.
        for _ in range(20):
            stages = stages_of(ui_url, context.applicationId)
            if stages_settled(stages):
                break
            time.sleep(0.25)
        return driver + executor_cpu_seconds(stages)
    except (OSError, ValueError):
        return None


def executors_of(ui_url: str, app_id: str, timeout: float = 10.0) -> list[Mapping[str, Any]]:
    """The application's executors, the driver among them, from its driver's monitoring API
    (bounded read)."""
    return monitoring_list(ui_url, app_id, "allexecutors", timeout)


def heap_of(metrics: Any) -> int | None:
    """`JVMHeapMemory` of one of Spark's executor-metrics objects, when positive."""
    value = metrics.get("JVMHeapMemory") if isinstance(metrics, dict) else None
    return value if isinstance(value, int) and value > 0 else None


def executors_peak_heap(executors: list[Mapping[str, Any]]) -> int | None:
    """The highest heap any executor JVM used (Spark's `peakMemoryMetrics.JVMHeapMemory`), the
    driver left out; None when no executor reported one. The live UI updates these executor
    peaks only from heartbeats (`spark.executor.heartbeatInterval`, the first one 1–2 intervals
    after the executor started): a short run can end before any."""
    peaks = [heap_of(e.get("peakMemoryMetrics")) for e in executors if e.get("id") != "driver"]
    return max((p for p in peaks if p is not None), default=None)


def stages_peak_heap(stages: list[Mapping[str, Any]]) -> int | None:
    """The highest heap an executor JVM used while running the tasks of these stages (a stage's
    `peakExecutorMetrics`, from its task ends: what the executor's metrics poller saw during
    each task, see EXECUTOR_METRICS_POLLING); None when no task reported one."""
    peaks = [heap_of(s.get("peakExecutorMetrics")) for s in stages]
    return max((p for p in peaks if p is not None), default=None)


def jvm_peak_heap(spark) -> tuple[int, int] | None:
    """(peak heap used, max heap) of the driver JVM since it started: the sum of its heap
    pools' peaks (an upper bound — each pool peaks at its own moment) capped at the max."""
    try:
        tj = task_jvm(spark.sparkContext._jvm)
        peak = int(tj.memory_pools().stream().filter(tj.heap_pool).collect(tj.sum_peak_used))
        heap_max = int(tj.memory_bean().getHeapMemoryUsage().getMax())
    except Exception:  # noqa: BLE001 — a figure for sizing, never a reason to fail the run
        return None
    if peak <= 0 or heap_max <= 0:
        return None
    return min(peak, heap_max), heap_max


def run_memory(spark) -> dict[str, Any] | None:
    """The heap the run's executors used at the most (docs/spark-job.md#figures): in local mode
    the driver JVM (the executors are its threads), on a cluster the largest executor's peak
    from the monitoring API. `cores`: the task slots that shared that heap — a core rewrites
    one file group at a time, so peak / cores is the heap a concurrent file group needed.
    None when it cannot be told (the driver UI off on a cluster, no executor reported)."""
    context = spark.sparkContext
    if executors_in_driver(str(context.master)):
        measured = jvm_peak_heap(spark)
        if measured is None:
            return None
        return {"peakHeapBytes": measured[0], "heapBytes": measured[1], "cores": context.defaultParallelism}
    # A copy of the whole conf, an entry per round trip: only where it is read.
    conf = context.getConf()
    ui_url = context.uiWebUrl
    if not ui_url:
        return None
    try:
        # The peaks reach the monitoring store through the listener bus, with the task ends
        # (per stage) and the heartbeats (per executor): wait (a little) for the stages to
        # settle and a peak to show, and take the larger of the two.
        for _ in range(20):
            stages = stages_of(ui_url, context.applicationId)
            executors = executors_of(ui_url, context.applicationId)
            peaks = [p for p in (stages_peak_heap(stages), executors_peak_heap(executors)) if p is not None]
            peak = max(peaks, default=None)
            if peak is not None and stages_settled(stages):
                break
            time.sleep(0.25)
    except (OSError, ValueError):
        return None
    if peak is None:
        return None
    heap = spark_memory_bytes(conf.get("spark.executor.memory", "1g"))
    cores = int(conf.get("spark.executor.cores", "1"))
    return {"peakHeapBytes": peak, **({} if heap is None else {"heapBytes": heap}), "cores": max(1, cores)}


_SPARK_MEMORY = re.compile(r"(\d+)([kmgt]?)b?", re.IGNORECASE)


def spark_memory_bytes(text: str) -> int | None:
    """Bytes of a Spark memory setting (`4g`, `512m`, `1024`: MiB without a unit); None if
    unreadable."""
    match = _SPARK_MEMORY.fullmatch(text.strip())
    if match is None:
        return None
    unit = match.group(2).lower()
    scale = {"": 2**20, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}[unit]
    return int(match.group(1)) * scale


def summary_int(summary: Mapping[str, str], key: str) -> int:
    try:
        return int(summary.get(key, 0))
    except (TypeError, ValueError):
        return 0


def commit_totals(commits: list[tuple[str, Mapping[str, str]]]) -> dict[str, int]:
    """Sums the snapshot summaries of the run's own commits: the `replace` snapshots between the
    table before and after the run (writers' commits in between are appends, overwrites and
    deletes; only rewrites replace). `(operation, summary)` pairs."""
    totals = {
        "bytesRead": 0,
        "bytesWritten": 0,
        "filesRewritten": 0,
        "dataFilesRemoved": 0,
        "deleteFilesRemoved": 0,
    }
    for operation, summary in commits:
        if operation != "replace":
            continue
        removed_data = summary_int(summary, "deleted-data-files")
        removed_deletes = summary_int(summary, "removed-delete-files")
        totals["bytesRead"] += summary_int(summary, "removed-files-size")
        totals["bytesWritten"] += summary_int(summary, "added-files-size")
        totals["filesRewritten"] += removed_data + removed_deletes
        totals["dataFilesRemoved"] += removed_data - summary_int(summary, "added-data-files")
        totals["deleteFilesRemoved"] += removed_deletes - summary_int(summary, "added-delete-files")
    return totals


def commits_since(
    tj: TaskJvm, table, after_snapshot_id: str | None, before_snapshot_id: str | None
) -> list[tuple[str, Mapping[str, str]]]:
    """`(operation, summary)` of the snapshot `after_snapshot_id` (the after figures') and its
    ancestors back to (not including) `before_snapshot_id` — all of them when that is none or
    not an ancestor — as far as the table still has them: Iceberg's
    `SnapshotUtil.ancestorsBetween`, the snapshots in one transfer whatever their number."""
    if after_snapshot_id is None or after_snapshot_id == before_snapshot_id:
        return []
    oldest = None if before_snapshot_id is None else int(before_snapshot_id)
    ancestors = tj.new_list(tj.ancestors_between(table, int(after_snapshot_id), oldest))
    out: list[tuple[str, Mapping[str, str]]] = []
    for read in tj.snapshots_json(ancestors):
        _, operation, summary = snapshot_summary(read)
        out.append((str(operation), summary))
    return out


def run(args: argparse.Namespace, task: dict[str, Any]) -> dict[str, Any]:
    catalog_name = args.catalog_name or task["table"]["catalog"]
    args.catalog_name = catalog_name
    started = time.monotonic()
    spark = build_session(args, task["type"])
    try:
        return run_in_session(spark, args, task, started)
    finally:
        spark.stop()


def run_restore(args: argparse.Namespace, task: dict[str, Any]) -> dict[str, Any]:
    """`--restore-run`: a quarantine run's files back in place (docs/operations.md)."""
    if task["type"] != "orphans":
        raise BadInput("--restore-run needs an orphans task: it names the table and its UUID")
    args.catalog_name = args.catalog_name or task["table"]["catalog"]
    spark = build_session(args, "restore")
    try:
        return restore_run(spark, args, task)
    finally:
        spark.stop()


def run_in_session(
    spark, args: argparse.Namespace, task: dict[str, Any], started: float, cpu_before: float = 0.0
) -> dict[str, Any]:
    """One task on a running session: guard, work, figures. `started` (monotonic) is where its
    `durationMs` counts from: the session's start for a single task, the task's own in a batch.
    `cpu_before`: the session's CPU before the task (a batch's tasks share the processes)."""
    table = load_table(spark, args.catalog_name, task["table"])
    tj = task_jvm(spark.sparkContext._jvm)
    metadata_table = is_metadata_table(table)
    now_ms = int(time.time() * 1000)
    allowed = guard_table(
        task,
        "" if metadata_table else str(table.uuid()),
        metadata_table,
        table_properties(tj, table),
        now_ms,
    )
    # From the metadata the guard just checked: the table was loaded a moment ago.
    before = table_figures(tj, table, refresh=False)
    if task["type"] == "cleanup":
        max_files = getattr(args, "driver_expiry_max_files", None)
        in_driver = runs_in_driver(before, DRIVER_EXPIRY_MAX_FILES if max_files is None else max_files)
        outcome = run_expire(spark, table, allowed, in_driver)
        # What was applied: the task's retention or the table's, whichever keeps more.
        outcome["expireSnapshots"]["olderThan"] = format_instant_ms(allowed["olderThanMs"])
        outcome["expireSnapshots"]["retainLast"] = allowed["retainLast"]
    elif task["type"] == "orphans":
        outcome = run_orphans(spark, args.catalog_name, table, task, allowed, now_ms)
    else:
        max_files = getattr(args, "driver_dangling_max_files", None)
        in_driver = runs_in_driver(before, DRIVER_DANGLING_MAX_FILES if max_files is None else max_files)
        outcome = run_rewrite(spark, table, task, args.max_concurrent_file_group_rewrites, in_driver)
    after = table_figures(tj, table)
    commits = commit_totals(commits_since(tj, table, after["snapshotId"], before["snapshotId"]))
    cpu = run_cpu_seconds(spark)
    memory = run_memory(spark)
    return {
        "ok": True,
        "taskId": task["id"],
        "type": task["type"],
        "exitCode": ExitCode.OK,
        "before": before,
        "after": after,
        "durationMs": int((time.monotonic() - started) * 1000),
        "commits": commits,
        **({} if cpu is None else {"cpuSeconds": round(max(0.0, cpu - cpu_before), 3)}),
        **({} if memory is None else {"memory": memory}),
        **outcome,
    }


# ---------------------------------------------------------------------------------------------
# Batches (`--tasks`): several small tasks of one catalog in one Spark session, one after
# another, each with its own guard, commit and result (docs/spark-job.md#batches). A session
# start costs more than a small table's maintenance (bench/results/lake-sim-2026-12-02.md).

# The most tasks one batch may hold: the dispatcher sends far fewer (docs/dispatcher.md); a
# bound keeps a malformed file from holding a session for hours.
MAX_BATCH_TASKS = 100
BATCH_RESULT_FILE = "batch.json"


def task_key(task_id: str) -> str:
    """A task's key in a batch's results: a hash of its id, since ids hold `/`, `%` and any
    table name. The same as the dispatcher's `taskHash` (runners/run-key.ts)."""
    import hashlib

    return hashlib.sha256(task_id.encode("utf-8")).hexdigest()[:16]


def task_result_name(task_id: str) -> str:
    """A task's result file in the result directory."""
    return task_key(task_id) + ".json"


#: A batch task outcome's figures, as arrays in this order (docs/spark-job.md#batches): arrays,
#: not objects, so that 20 successes with every figure still fit the 4 KiB termination message.
#: The dispatcher reads them back into the same figures as a full result's (job-result.ts).
OUTCOME_COMMITS = ("bytesRead", "bytesWritten", "filesRewritten", "dataFilesRemoved", "deleteFilesRemoved")
OUTCOME_MEMORY = ("peakHeapBytes", "cores", "heapBytes")

#: What fit_summary drops, step by step, once the error messages are gone: the heap first (only
#: the learned heap fit reads it), then the commit figures (the ledger then takes the table's
#: figures, learned sizing the task's estimate), then the snapshots, duration and CPU.
OUTCOME_FIGURE_STEPS = (("memory",), ("commits",), ("snapshots", "durationMs", "cpuSeconds"))


def task_outcome(payload: dict[str, Any]) -> dict[str, Any]:
    """A task's result, compact, for the batch's summary: its exit code and the figures the
    dispatcher records of a run (duration, CPU, commits, snapshots before and after, heap), or
    its error. The summary is what the Spark operator runner reads back (the driver's
    termination message holds one line of at most 4096 bytes, not every task's full result)."""
    if not payload.get("ok"):
        return {"exitCode": payload["exitCode"], "error": dict(payload["error"])}
    out: dict[str, Any] = {"exitCode": ExitCode.OK}
    for key in ("durationMs", "cpuSeconds"):
        if key in payload:
            out[key] = payload[key]
    commits = payload.get("commits")
    if isinstance(commits, dict):
        out["commits"] = [int(commits.get(key, 0)) for key in OUTCOME_COMMITS]
    before, after = payload.get("before"), payload.get("after")
    if isinstance(before, dict) and isinstance(after, dict):
        out["snapshots"] = [int(before["snapshots"]), int(after["snapshots"])]
    memory = payload.get("memory")
    if isinstance(memory, dict):
        # heapBytes is last: absent when it cannot be told, the array is then two long.
        out["memory"] = [int(memory[key]) for key in OUTCOME_MEMORY if key in memory]
    return out


def fit_summary(summary: dict[str, Any], limit: int) -> dict[str, Any]:
    """The summary made to fit `limit` bytes as one line: the error messages (the tasks' and the
    batch's own) shortened,
    then dropped, then the successes' figures in OUTCOME_FIGURE_STEPS order. Exit codes and
    error kinds always stay: they decide each task's fate (done, retried, failed). What still
    does not fit (some 60 failed tasks and more) is not written at all (write_termination_log):
    the runner reports them lost."""

    def fits(value: dict[str, Any]) -> bool:
        return len(result_line(value).encode("utf-8")) <= limit

    if fits(summary):
        return summary
    fitted = json.loads(json.dumps(summary))
    outcomes = list(fitted.get("tasks", {}).values())
    errors = [outcome["error"] for outcome in outcomes if "error" in outcome]
    # The batch's own error (its session failed) is shortened and dropped with the tasks'.
    if isinstance(fitted.get("error"), dict):
        errors.append(fitted["error"])
    for error in errors:
        error["message"] = str(error.get("message", ""))[:120]
    if fits(fitted):
        return fitted
    for error in errors:
        error.pop("message", None)
    for keys in OUTCOME_FIGURE_STEPS:
        if fits(fitted):
            return fitted
        for outcome in outcomes:
            for key in keys:
                outcome.pop(key, None)
    return fitted


def parse_batch(value: Any) -> list[tuple[str, dict[str, Any] | JobError]]:
    """(task id, the checked task or why it is bad input) for each task of a `--tasks` file.

    A task that fails parse_task is bad input of its own (its result says so, the others run);
    the batch as a whole is bad input (BadInput raised) only when no task could be told apart:
    not a list, empty, over MAX_BATCH_TASKS, a task without a string id, an id twice."""
    if not isinstance(value, list):
        raise BadInput("tasks must be a JSON array of tasks")
    if not value:
        raise BadInput("tasks must not be empty")
    if len(value) > MAX_BATCH_TASKS:
        raise BadInput(f"tasks holds {len(value)} tasks, at most {MAX_BATCH_TASKS} are allowed")
    out: list[tuple[str, dict[str, Any] | JobError]] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(value):
        task_id = item.get("id") if isinstance(item, dict) else None
        if not isinstance(task_id, str) or not task_id:
            raise BadInput(f"tasks[{i}].id is required: a task without an id cannot have its own result")
        if task_id in seen:
            raise BadInput(f"tasks[{i}].id repeats tasks[{seen[task_id]}].id")
        seen[task_id] = i
        try:
            out.append((task_id, parse_task(item)))
        except BadInput as error:
            out.append((task_id, BadInput(f"tasks[{i}]: {error}")))
    return out


def session_alive(spark) -> bool:
    """Can the session run the next task? False once the JVM or its SparkContext is gone."""
    try:
        return not spark.sparkContext._jsc.sc().isStopped()
    except Exception:  # noqa: BLE001 — a py4j error here means the JVM is gone
        return False


def run_batch(
    args: argparse.Namespace,
    value: Any,
    start_session=None,
    run_task=None,
    clock=None,
    sleep=None,
    wall=None,
) -> dict[str, Any]:
    """Runs the batch's tasks one after another in one session; each task's result goes to its
    own file in `args.result_dir` (atomically) and to stdout. A task whose result file exists is
    skipped: it ran before, in a batch run that was cut short, and never runs twice. One task's
    failure is that task's result; a session failure ends the batch, and the tasks it left
    without a result are the runner's to report lost (retried). Returns the batch's summary,
    with each ended task's outcome in `tasks` (task_outcome). Without `args.result_dir` (the
    Spark operator runner: its application is never launched twice, the name sees to that)
    the results are on stdout and in the summary only.

    With `args.inbox` (a resident session, ADR 0045) the session then stays up for further task
    lists the dispatcher renames into the inbox, runs them the same way, and closes the inbox
    (run_inbox) when it found nothing for `args.idle_seconds`, took `args.max_tasks` tasks or
    reached `args.close_by` (wall-clock seconds, ADR 0046: before the runner's kill at the task
    timeout). `start_session`, `run_task`, `clock`, `sleep` and `wall` are for tests
    (build_session, run_in_session, time.monotonic, time.sleep, time.time)."""
    batch = _Batch(args, start_session or build_session, run_task or run_in_session, clock or time.monotonic)
    entries = parse_batch(value)
    # The batch's catalog: its first valid task's. `--catalog-name` only names it in Spark.
    batch.catalog = next((t["table"]["catalog"] for _, t in entries if not isinstance(t, JobError)), None)
    try:
        batch.run(entries)
        if getattr(args, "inbox", None):
            close_at = inbox_close_at(batch.clock(), getattr(args, "close_by", None), (wall or time.time)())
            run_inbox(
                batch, args.inbox, float(args.idle_seconds), int(args.max_tasks), sleep or time.sleep, close_at
            )
    except Exception as error:  # noqa: BLE001 — the session failed: the rest have no result
        failure = failure_payload(None, error)
        batch.summary.update(exitCode=ExitCode.FAILED, error=failure["error"])
        print(f"icepack_job: the batch's session failed after {batch.ran} of {batch.taken} tasks", file=sys.stderr)
        if getattr(args, "inbox", None):
            # Nothing more may be accepted by a session that is gone: the dispatcher's next
            # rename fails and it launches the task itself. Files already in: no result, lost.
            close_inbox(args.inbox)
    finally:
        if batch.spark is not None:
            try:
                batch.spark.stop()
            except Exception:  # noqa: BLE001 — stopping a dead session fails; its results are out
                pass
    if batch.session_started is not None:
        batch.summary["ran"] = batch.ran
    return batch.summary


class _Batch:
    """One application's run of task lists: its session (started at the first task to run), the
    results so far and the figures the next task counts from."""

    def __init__(self, args: argparse.Namespace, start_session, run_task, clock) -> None:
        self.args = args
        self.start_session = start_session
        self.run_task = run_task
        self.clock = clock
        self.result_dir = getattr(args, "result_dir", None)
        if self.result_dir:
            os.makedirs(self.result_dir, exist_ok=True)
        self.catalog: str | None = None
        self.outcomes: dict[str, dict[str, Any]] = {}
        self.summary: dict[str, Any] = {"batch": 0, "skipped": 0, "exitCode": ExitCode.OK, "tasks": self.outcomes}
        self.spark = None
        # When the session was asked to start (None until a task is to run).
        self.session_started: float | None = None
        self.cpu_before = 0.0
        self.ran = 0
        self.taken = 0
        # When the last task ended (None before the first): the idle time before the next one.
        self.last_end: float | None = None

    def ended(self, payload: dict[str, Any], path: str | None) -> None:
        write_result(payload, path)
        self.outcomes[task_key(payload.get("taskId") or "")] = task_outcome(payload)

    def run(self, entries: list[tuple[str, dict[str, Any] | JobError]]) -> None:
        """Runs one task list (parse_batch's entries) in the session, starting it if needed.
        Raises when the session failed; the tasks left have no result."""
        self.summary["batch"] += len(entries)
        self.taken += len(entries)
        pending: list[tuple[dict[str, Any], str | None]] = []
        for task_id, checked in entries:
            path = os.path.join(self.result_dir, task_result_name(task_id)) if self.result_dir else None
            if path is not None and os.path.exists(path):
                print(f"icepack_job: {task_id} has a result already; not run again", file=sys.stderr)
                self.summary["skipped"] += 1
            elif isinstance(checked, JobError):
                self.ended(error_payload(task_id, checked.kind, str(checked)), path)
            elif self.catalog is None or checked["table"]["catalog"] != self.catalog:
                # One session, one catalog configuration: the dispatcher batches one catalog only.
                message = f"task.table.catalog is {checked['table']['catalog']}, the batch's is {self.catalog}"
                self.ended(error_payload(task_id, "bad-input", message), path)
            else:
                pending.append((checked, path))
        if not pending:
            return
        if self.spark is None:
            self.args.catalog_name = self.args.catalog_name or self.catalog
            self.session_started = self.clock()
            self.spark = self.start_session(self.args, "batch")
        for task, path in pending:
            # The first task's duration and CPU include the session's start, as a single task's
            # do; the others count their own (the batch's sum is the session's).
            now = self.clock()
            started = self.session_started if self.ran == 0 else now
            idle_ms = int((now - self.last_end) * 1000) if self.last_end is not None else 0
            try:
                payload = self.run_task(self.spark, self.args, task, started, self.cpu_before)
            except Exception as error:  # noqa: BLE001 — one task's failure is its own result
                if not session_alive(self.spark):
                    raise
                payload = failure_payload(task["id"], error)
            if idle_ms > 0:
                # The session was held, waiting, before this task (ADR 0045): compute the
                # ledger charges to it beside its own durationMs.
                payload["idleMs"] = idle_ms
            self.ended(payload, path)
            self.last_end = self.clock()
            self.cpu_before += payload.get("cpuSeconds", 0.0)
            self.ran += 1


# How often a resident session looks into its inbox (seconds): a task waits at most this long
# before it starts; a listing of a local directory costs nothing next to it.
INBOX_POLL_SECONDS = 0.25
#: The closed inbox: `<inbox>` renamed. The rename is the handshake with the dispatcher.
CLOSED_INBOX_SUFFIX = ".closed"


def inbox_files(inbox: str) -> list[str]:
    """The task lists in the inbox, in name order (the dispatcher's names sort by when they were
    appended). Only `*.json`: the dispatcher writes elsewhere and renames in, so each is whole."""
    try:
        names = os.listdir(inbox)
    except FileNotFoundError:
        return []
    return [os.path.join(inbox, name) for name in sorted(names) if name.endswith(".json") and not name.startswith(".")]


def close_inbox(inbox: str) -> str | None:
    """Renames the inbox to `<inbox>.closed`: from then on a dispatcher's rename into the inbox
    fails (ENOENT) and the task is not this application's. The closed directory's path, or None
    when there was no open inbox."""
    closed = inbox.rstrip(os.sep) + CLOSED_INBOX_SUFFIX
    try:
        os.rename(inbox, closed)
    except FileNotFoundError:
        return None
    return closed


def run_inbox_file(batch: _Batch, path: str) -> None:
    """One appended task list, run like the batch's own; removed once run. A file whose tasks
    cannot be told apart (parse_batch) is set aside as `<file>.bad`: its tasks have no result,
    and the dispatcher reports them lost when the application ends."""
    try:
        with open(path, encoding="utf-8") as fh:
            entries = parse_batch(json.loads(fh.read()))
    except (ValueError, JobError) as error:
        print(f"icepack_job: {os.path.basename(path)} in the inbox is not a task list: {error}", file=sys.stderr)
        batch.summary["badInboxFiles"] = batch.summary.get("badInboxFiles", 0) + 1
        os.replace(path, path + ".bad")
        return
    batch.summary["appended"] = batch.summary.get("appended", 0) + len(entries)
    batch.run(entries)
    os.remove(path)


def inbox_close_at(now: float, close_by: float | None, wall_now: float) -> float | None:
    """The dispatcher's close time (`--close-by`, wall-clock seconds) on the batch's clock (`now`
    is its reading when `wall_now` was the wall clock's): the session's clock is monotonic, the
    close time is the dispatcher's, taken before the launch. None without one."""
    if close_by is None:
        return None
    return now + (close_by - wall_now)


def run_inbox(
    batch: _Batch, inbox: str, idle_seconds: float, max_tasks: int, sleep, close_at: float | None = None
) -> None:
    """A resident session (ADR 0045): runs the task lists the dispatcher renames into `inbox`,
    in name order, until it found nothing for `idle_seconds`, took `max_tasks` tasks or its clock
    reached `close_at` (ADR 0046: the dispatcher appends nothing it judges could not end by then,
    and the runner kills the application a reserve later); then closes the inbox (close_inbox)
    and runs what the closed directory holds — lists renamed in before the close — and returns.
    A list is in the inbox or was refused: none is lost, none runs twice. The time between the
    last task's end and the close is in `idleMs`."""
    waiting_since = batch.clock()
    while batch.taken < max_tasks:
        if close_at is not None and batch.clock() >= close_at:
            break
        files = inbox_files(inbox)
        if files:
            run_inbox_file(batch, files[0])
            waiting_since = batch.clock()
            continue
        if batch.clock() - waiting_since >= idle_seconds:
            break
        sleep(INBOX_POLL_SECONDS)
    closed = close_inbox(inbox)
    batch.summary["idleMs"] = int((batch.clock() - waiting_since) * 1000)
    if closed is None:
        return
    for path in inbox_files(closed):
        run_inbox_file(batch, path)


# ---------------------------------------------------------------------------------------------
# Tracing: one span for the run, a child of the dispatch that started it (TRACEPARENT), sent
# over OTLP/HTTP when an endpoint is configured. Tracing never fails or changes the job.

TRACES_ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
SPAN_SERVICE_NAME = "spark-job"
# Seconds a finished job may spend handing its span to the collector. Fixed rather than read
# from OTEL_EXPORTER_OTLP_TIMEOUT: the local runner passes the dispatcher's environment, where
# that variable is in milliseconds, while Python's exporter reads it as seconds.
SPAN_EXPORT_TIMEOUT_S = 10.0


def tracing_wanted(env: Mapping[str, str]) -> bool:
    """An OTLP endpoint is set and the SDK is not switched off (OTel's own variables)."""
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    if env.get("OTEL_TRACES_EXPORTER", "").strip().lower() == "none":
        return False
    return any(env.get(name, "").strip() for name in TRACES_ENDPOINT_VARIABLES)


def _tracing_warning(what: str, error: BaseException) -> None:
    # stderr, like Spark's logs: stdout carries the result line only.
    print(f"icepack_job: {what}, no span for this run: {type(error).__name__}: {error}", file=sys.stderr)


class JobSpan:
    """The run's span, or nothing at all. No method raises: a tracing failure is only logged."""

    def __init__(self, provider: Any = None, span: Any = None) -> None:
        self._provider = provider
        self._span = span

    @property
    def recording(self) -> bool:
        return self._span is not None

    def describe(self, task: Any) -> None:
        """Names the span after the task (`job <type>`, like the dispatcher's `dispatch <type>`)
        and adds its id and table: whatever of them the task, checked or not, has."""
        if self._span is None or not isinstance(task, dict):
            return
        try:
            if task.get("type") in TASK_TYPES:
                self._span.update_name(f"job {task['type']}")
                self._span.set_attribute("icepack.task.type", task["type"])
            if isinstance(task.get("id"), str):
                self._span.set_attribute("icepack.task.id", task["id"])
            table = task.get("table")
            if isinstance(table, dict) and isinstance(table.get("namespace"), list):
                parts = [table.get("catalog"), *table["namespace"], table.get("name")]
                if all(isinstance(part, str) for part in parts):
                    self._span.set_attribute("icepack.table", ".".join(parts))
        except Exception as error:  # noqa: BLE001 — see the class comment
            _tracing_warning("cannot describe the span", error)

    def describe_batch(self, tasks: Any) -> None:
        """Adds the batch's size and its tasks' ids — whatever the task list, checked or not,
        has — so that each task's run is found in the trace of the batch (the dispatch of the
        task that leads it, whose TRACEPARENT the batch carries). Named at the start (main)."""
        if self._span is None or not isinstance(tasks, list):
            return
        try:
            self._span.set_attribute("icepack.batch.tasks", len(tasks))
            ids = [task["id"] for task in tasks if isinstance(task, dict) and isinstance(task.get("id"), str)]
            if ids:
                self._span.set_attribute("icepack.task.ids", ids)
        except Exception as error:  # noqa: BLE001 — see the class comment
            _tracing_warning("cannot describe the span", error)

    def finish(self, payload: dict[str, Any]) -> None:
        """Ends the span with the result's outcome and waits (bounded) for its export. A batch's
        (its summary) also says how many of its tasks failed: the batch itself succeeds when
        every task has a result, whatever it says."""
        if self._span is None:
            return
        try:
            from opentelemetry.trace import Status, StatusCode

            self._span.set_attribute("icepack.job.exit_code", int(payload["exitCode"]))
            if isinstance(payload.get("tasks"), dict):
                failed = sum(1 for outcome in payload["tasks"].values() if outcome.get("exitCode") != ExitCode.OK)
                self._span.set_attribute("icepack.batch.failed", failed)
            if payload.get("ok"):
                self._span.set_status(Status(StatusCode.OK))
            else:
                error = payload["error"]
                self._span.set_attribute("icepack.job.error_kind", error["kind"])
                self._span.set_status(Status(StatusCode.ERROR, f"{error['kind']}: {error['message']}"))
            self._span.end()
            self._provider.shutdown()
        except Exception as error:  # noqa: BLE001 — see the class comment
            _tracing_warning("cannot export the span", error)


# The span's name until the task is read: a single task's becomes `job <type>` (describe); a
# batch's stays BATCH_SPAN_NAME, whatever its tasks' types.
JOB_SPAN_NAME = "job"
BATCH_SPAN_NAME = "job batch"


def start_job_span(env: Mapping[str, str], name: str = JOB_SPAN_NAME) -> JobSpan:
    """The run's span when tracing is wanted and the OpenTelemetry SDK is installed."""
    if not tracing_wanted(env):
        return JobSpan()
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
    except ImportError as error:
        _tracing_warning("OpenTelemetry is not installed (jobs/spark/requirements.txt)", error)
        return JobSpan()
    try:
        # The exporter finds the endpoint, headers and TLS settings in the OTEL_* variables.
        provider = TracerProvider(
            resource=Resource.create({"service.name": SPAN_SERVICE_NAME}), shutdown_on_exit=False
        )
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(timeout=SPAN_EXPORT_TIMEOUT_S)))
        carrier = {"traceparent": env["TRACEPARENT"]} if env.get("TRACEPARENT") else {}
        parent = TraceContextTextMapPropagator().extract(carrier)
        span = provider.get_tracer("icepack.spark-job").start_span(name, context=parent)
        return JobSpan(provider, span)
    except Exception as error:  # noqa: BLE001 — tracing must never fail the job
        _tracing_warning("cannot start tracing", error)
        return JobSpan()


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="icepack_job.py", description="Run one Icepack maintenance task.")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--task", help="task JSON file, or - for stdin")
    source.add_argument("--task-json", help="task JSON text")
    source.add_argument("--tasks", help="batch: a JSON array of tasks of one catalog (file, or - for stdin)")
    source.add_argument("--tasks-json", help="batch: a JSON array of tasks of one catalog (text)")
    parser.add_argument("--catalog-name", help="Spark catalog name (default: the task's table.catalog)")
    parser.add_argument("--catalog-uri", help="REST catalog URI; omit when spark conf configures the catalog")
    parser.add_argument("--warehouse")
    parser.add_argument("--max-concurrent-file-group-rewrites", type=int)
    parser.add_argument(
        "--driver-expiry-max-files",
        type=int,
        help=f"cleanup: expire in the driver under this many live files (default {DRIVER_EXPIRY_MAX_FILES}; 0: never)",
    )
    parser.add_argument(
        "--driver-dangling-max-files",
        type=int,
        help="merge, sort: judge and remove dangling delete files in the driver under this many live files "
        f"(default {DRIVER_DANGLING_MAX_FILES}; 0: never)",
    )
    parser.add_argument("--result-file", help="also write the result line here (atomically)")
    parser.add_argument("--result-dir", help="batch: each task's result in <dir>/<hash of task id>.json")
    parser.add_argument(
        "--inbox",
        help="batch: after the tasks, run further task lists renamed into this directory (ADR 0045)",
    )
    parser.add_argument(
        "--idle-seconds",
        type=float,
        default=0.0,
        help="with --inbox: close the inbox after finding nothing in it for this long (default 0)",
    )
    parser.add_argument(
        "--max-tasks",
        type=int,
        default=MAX_BATCH_TASKS,
        help=f"with --inbox: close the inbox once this many tasks were taken (default {MAX_BATCH_TASKS})",
    )
    parser.add_argument(
        "--close-by",
        type=float,
        help="with --inbox: close the inbox at this time (seconds since the epoch) at the latest (ADR 0046)",
    )
    parser.add_argument(
        "--termination-log",
        help="also write the result line to this container termination-message file (Kubernetes)",
    )
    parser.add_argument(
        "--restore-run",
        help="put the files of this orphan quarantine run back (the --task is an orphans task naming the table)",
    )
    args = parser.parse_args(argv)
    if args.restore_run is not None and args.tasks is not None:
        parser.error("--restore-run takes one --task, not --tasks")
    if args.tasks is not None and not args.result_dir:
        parser.error("--tasks needs --result-dir: each task's result is a file of its own")
    if args.tasks_json is not None and not (args.result_dir or args.termination_log):
        parser.error("--tasks-json needs --result-dir or --termination-log: where the results go")
    if args.inbox is not None and args.tasks is None:
        parser.error("--inbox takes --tasks: an inbox is a batch's, and its results are files")
    if args.close_by is not None and args.inbox is None:
        parser.error("--close-by takes --inbox: it is when a resident session's inbox closes")
    if args.idle_seconds < 0:
        parser.error(f"--idle-seconds must be 0 or more, not {args.idle_seconds}")
    if args.max_tasks < 1:
        parser.error(f"--max-tasks must be 1 or more, not {args.max_tasks}")
    return args


# What Kubernetes keeps of a container's termination message (bytes); beyond it, it truncates.
TERMINATION_MESSAGE_LIMIT = 4096


def write_termination_log(line: str, path: str) -> None:
    """The result line as the driver container's termination message, which the pod status
    carries (`state.terminated.message`) for the dispatcher to read. Written in place (the
    kubelet mounts the file; it cannot be replaced); a line over the limit is not written, since
    a truncated one would not parse. Never fails the job: the result is also on stdout."""
    if len(line.encode("utf-8")) > TERMINATION_MESSAGE_LIMIT:
        print(f"result line over {TERMINATION_MESSAGE_LIMIT} bytes; not in the termination message", file=sys.stderr)
        return
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(line)
    except OSError as error:
        print(f"cannot write the termination message {path}: {error}", file=sys.stderr)


def write_result(payload: dict[str, Any], path: str | None, termination_log: str | None = None) -> None:
    line = result_line(payload)
    if path:
        tmp = f"{path}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(line + "\n")
        os.replace(tmp, path)
    if termination_log:
        write_termination_log(line, termination_log)
    print(line, flush=True)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if is_batch(args):
        return main_batch(args, start_job_span(os.environ, BATCH_SPAN_NAME))
    span = start_job_span(os.environ)
    task_id: str | None = None
    try:
        value = read_task(args)
        # Before the checks: a task with bad input is found by its id in the trace too.
        span.describe(value)
        task = parse_task(value)
        task_id = task["id"]
        payload = run(args, task) if args.restore_run is None else run_restore(args, task)
    except Exception as error:  # noqa: BLE001 — every failure must end in one result line
        payload = failure_payload(task_id, error)
    write_result(payload, args.result_file, args.termination_log)
    # After the result is safe: a slow collector delays the job's exit, never its result.
    span.finish(payload)
    return int(payload["exitCode"])


def main_batch(args: argparse.Namespace, span: JobSpan) -> int:
    """`--tasks`: the tasks' results are in the result directory; stdout ends with the batch's
    summary line (`batch.json` too). Exit 0 when every task has a result, whatever it says;
    2 when the batch itself is bad input (no task ran); 1 when the session failed."""
    try:
        tasks = read_task(args)
        # Before the checks, as a single task's: a bad batch is found by its tasks' ids too.
        span.describe_batch(tasks)
        summary = run_batch(args, tasks)
    except JobError as error:
        failure = error_payload(None, error.kind, str(error))
        summary = {"batch": 0, "exitCode": failure["exitCode"], "error": failure["error"]}
    if args.inbox:
        # A bad batch never opened its inbox's loop: closed here, so that the dispatcher's next
        # rename fails and it launches that task itself (a no-op when run_batch closed it).
        close_inbox(args.inbox)
    # Also for a bad batch, which ends before the directory is made: the runner reads the
    # summary to tell "bad input, do not retry" from "killed, retry".
    path: str | None = None
    if args.result_dir:
        try:
            os.makedirs(args.result_dir, exist_ok=True)
            path = os.path.join(args.result_dir, BATCH_RESULT_FILE)
        except OSError as error:
            print(f"icepack_job: cannot make the result directory: {error}", file=sys.stderr)
    write_result(summary, path)
    if args.termination_log:
        # Every task's outcome, made to fit: the Spark operator runner's only way back.
        write_termination_log(result_line(fit_summary(summary, TERMINATION_MESSAGE_LIMIT)), args.termination_log)
    span.finish({"ok": summary["exitCode"] == ExitCode.OK, **summary})
    return int(summary["exitCode"])


if __name__ == "__main__":
    sys.exit(main())
