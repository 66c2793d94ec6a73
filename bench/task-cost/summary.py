"""Tables of phases.py's output: per (table kind, task type), the mean CPU-s and wall-s of each
phase and of the whole task; the procedures, core expiries and idle lines likewise.

    python summary.py RUN.jsonl [RUN.jsonl …]   (the runs are pooled)
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict

ORDER = ["load-table", "guard", "before-figures", "rewrite", "expire", "dangling-scan", "dangling-driver", "dangling", "after-figures", "commit-totals", "probes"]


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def main(paths: list[str]) -> None:
    tasks: dict[tuple[str, str], list[dict]] = defaultdict(list)
    other: dict[tuple[str, str, str], list[dict]] = defaultdict(list)
    for path in paths:
        with open(path, encoding="utf-8") as lines:
            for line in lines:
                row = json.loads(line)
                if row["kind"] == "task":
                    tasks[(row["table"], row["type"])].append(row)
                else:
                    other[(row["kind"], row.get("table", ""), row.get("type", ""))].append(row)
    print("| table, task | n | " + " | ".join(ORDER) + " | other | task total |")
    print("| --- | --- | " + " | ".join("---" for _ in ORDER) + " | --- | --- |")
    for (kind, task_type), rows in sorted(tasks.items()):
        cells = []
        known_cpu, known_wall = 0.0, 0.0
        for phase in ORDER:
            cpu = mean([r["phases"].get(phase, [0.0, 0.0])[1] for r in rows])
            wall = mean([r["phases"].get(phase, [0.0, 0.0])[0] for r in rows])
            known_cpu += cpu
            known_wall += wall
            present = any(phase in r["phases"] for r in rows)
            cells.append(f"{cpu:.2f} / {wall:.2f}" if present else "–")
        cpu, wall = mean([r["cpu"] for r in rows]), mean([r["wall"] for r in rows])
        cells.append(f"{cpu - known_cpu:.2f} / {wall - known_wall:.2f}")
        cells.append(f"**{cpu:.2f} / {wall:.2f}**")
        print(f"| {kind}, {task_type} | {len(rows)} | " + " | ".join(cells) + " |")
    print()
    # Py4J round trips (phases.py counts every command sent to the JVM), mean per task.
    print("| table, task (Py4J round trips) | n | " + " | ".join(ORDER) + " | other | task total |")
    print("| --- | --- | " + " | ".join("---" for _ in ORDER) + " | --- | --- |")
    for (kind, task_type), rows in sorted(tasks.items()):
        if not all("py4jCalls" in r for r in rows):
            continue
        cells, known = [], 0.0
        for phase in ORDER:
            calls = mean([r["phaseCalls"].get(phase, 0) for r in rows])
            known += calls
            cells.append(f"{calls:.0f}" if any(phase in r["phaseCalls"] for r in rows) else "–")
        total = mean([r["py4jCalls"] for r in rows])
        cells += [f"{total - known:.0f}", f"**{total:.0f}**"]
        print(f"| {kind}, {task_type} | {len(rows)} | " + " | ".join(cells) + " |")
    print()
    print("| reference | n | CPU-s (mean) | wall-s (mean) |")
    print("| --- | --- | --- | --- |")
    for (kind, table, what), rows in sorted(other.items()):
        if kind == "idle":
            seconds = mean([r["seconds"] for r in rows])
            print(f"| idle warm session, {seconds:.0f} s | {len(rows)} | {mean([r['cpu'] for r in rows]):.2f} | – |")
            continue
        label = f"{kind} {what}".strip() + f", {table}"
        print(f"| {label} | {len(rows)} | {mean([r['cpu'] for r in rows]):.2f} | {mean([r['wall'] for r in rows]):.2f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
