"""Tables of an alternating peers run: python3 summarize.py RUN.jsonl [...]

One JSON line per process (peers.sh). Per process: warm = median of passes 4..N (after the JIT
has compiled the hot code), first = pass 1. Across rounds: median [min-max]. Ratios are taken
per round (back-to-back processes under the same load), then median [min-max]: Icepack's
throughput over the peer's (> 1: Icepack does the work in less CPU)."""
import json
import statistics as st
import sys
from collections import defaultdict

rows = [json.loads(line) for path in sys.argv[1:] for line in open(path) if line.strip()]
by = defaultdict(list)
for r in rows:
    by[r["label"]].append(r)


def warm(r, key):
    p = r["result"]["passes"]
    return st.median([x[key] for x in (p[3:] if len(p) > 3 else p)])


def first(r, key):
    return r["result"]["passes"][0][key]


def fmt(vals, f="{:,.0f}"):
    return f"{f.format(st.median(vals))} [{f.format(min(vals))}–{f.format(max(vals))}]"


def per_round(label):
    return {r["round"]: r for r in by[label]}


loads = [float(r["load"].split()[0]) for r in rows]
print(f"processes: {len(rows)}; rounds: {len({r['round'] for r in rows})}; "
      f"passes per process: {sorted({len(r['result']['passes']) for r in rows})}; "
      f"1-min load average at each process start: {min(loads)}–{max(loads)} (median {st.median(loads)})\n")

decode = [k for k in ["icepack-scan", "icepack", "icepack-avsc", "java-proj", "java-full",
                      "pyiceberg-proj", "pyiceberg-full"] if by[f"decode/{k}"]]
if decode:
    entries = by[f"decode/{decode[0]}"][0]["result"]["check"]["entries"]
    print(f"## decode: {entries:,} entries, one manifest at a time\n")
    print("| contender | entries/CPU-s warm | entries/CPU-s first pass | entries/s wall warm | peak RSS MiB | ÷ java-proj (CPU, per round) |")
    print("|---|---|---|---|---|---|")
    java = per_round("decode/java-proj")
    for k in decode:
        rs = by[f"decode/{k}"]
        ratio = [warm(java[r["round"]], "cpu") / warm(r, "cpu") for r in rs if r["round"] in java]
        print(f"| {k} | {fmt([entries / warm(r, 'cpu') for r in rs])} "
              f"| {fmt([entries / first(r, 'cpu') for r in rs])} "
              f"| {fmt([entries / warm(r, 'wall') for r in rs])} "
              f"| {fmt([r['maxRssKb'] / 1024 for r in rs])} "
              f"| {fmt(ratio, '{:.2f}') if ratio else '–'} |")
    print("\nchecks (must be one per contender):",
          {k: sorted({json.dumps(r["result"]["check"], sort_keys=True) for r in by[f"decode/{k}"]}) for k in decode})

health = [k for k in ["icepack", "icepack-avsc", "java-proj", "java-full", "pyiceberg-proj",
                      "pyiceberg-full"] if by[f"health/{k}"]]
if health:
    print("\n## table health: metadata JSON → figures, fresh caches each pass\n")
    print("| contender | ms CPU warm | ms CPU first pass | ms wall warm | peak RSS MiB | java-proj ÷ contender (CPU, per round) |")
    print("|---|---|---|---|---|---|")
    java = per_round("health/java-proj")
    for k in health:
        rs = by[f"health/{k}"]
        ratio = [warm(java[r["round"]], "cpu") / warm(r, "cpu") for r in rs if r["round"] in java]
        print(f"| {k} | {fmt([1000 * warm(r, 'cpu') for r in rs])} "
              f"| {fmt([1000 * first(r, 'cpu') for r in rs])} "
              f"| {fmt([1000 * warm(r, 'wall') for r in rs])} "
              f"| {fmt([r['maxRssKb'] / 1024 for r in rs])} "
              f"| {fmt(ratio, '{:.2f}') if ratio else '–'} |")
    print("\nchecks:", {k: sorted({json.dumps(r["result"]["check"], sort_keys=True) for r in by[f"health/{k}"]}) for k in health})

oneshot = [k for k in ["icepack", "java-proj", "pyiceberg-full"] if by[f"oneshot/{k}"]]
if oneshot:
    print("\n## one-shot health process (start-up + load + health; /usr/bin/time)\n")
    print("| contender | process CPU s | process wall s | max RSS MiB |")
    print("|---|---|---|---|")
    for k in oneshot:
        rs = by[f"oneshot/{k}"]
        print(f"| {k} | {fmt([r['procCpu'] for r in rs], '{:.2f}')} "
              f"| {fmt([r['procWall'] for r in rs], '{:.2f}')} "
              f"| {fmt([r['maxRssKb'] / 1024 for r in rs])} |")
