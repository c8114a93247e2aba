#!/usr/bin/env python3
"""Turns emulator_bench's JSON output into the Markdown table of bench/RESULTS.md.

    emulator_bench --benchmark_repetitions=5 --benchmark_display_aggregates_only=true \
        --benchmark_out=bench.json --benchmark_out_format=json
    bench/summarize.py bench.json [more.json ...]

For each benchmark: the median real time per operation with its min-max over the
repetitions, the median CPU time of rank 0's worker thread (with one thread, the CPU the
whole cluster spent per operation, which machine load inflates much less than real time),
and the median of each counter (per_msg, per_hop). Several files (runs taken at different
times) are pooled: their repetitions count together. Python 3 standard library only.
"""
import json
import statistics
import sys
from collections import OrderedDict

COUNTERS = ("per_msg", "per_hop")


def fmt_time(ns):
    """A duration in ns, in the unit that reads best."""
    if ns >= 1e9:
        return f"{ns / 1e9:.2f} s"
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.2f} µs"
    return f"{ns:.0f} ns"


def to_ns(value, unit):
    return value * {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[unit]


def main(paths):
    runs = OrderedDict()  # run name -> list of iteration entries (one per repetition)
    contexts = []
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        contexts.append(data["context"])
        for b in data["benchmarks"]:
            if b.get("run_type") != "iteration":
                continue
            if b.get("error_occurred"):
                runs.setdefault(b["run_name"], [])
                continue
            runs.setdefault(b["run_name"], []).append(b)

    for c in contexts:
        print(f"<!-- {c['date']}: load average {', '.join(f'{x:.2f}' for x in c['load_avg'])};"
              f" libbenchmark build type {c.get('library_build_type', '?')} -->")
    print("| benchmark | reps | real time per op: median (min-max) | CPU per op, median |"
          " counters: median |")
    print("| --- | ---: | ---: | ---: | --- |")
    for name, reps in runs.items():
        short = name.replace("/real_time", "")
        if not reps:
            print(f"| {short} | 0 | failed | | |")
            continue
        real = [to_ns(r["real_time"], r["time_unit"]) for r in reps]
        cpu = [to_ns(r["cpu_time"], r["time_unit"]) for r in reps]
        counters = []
        for c in COUNTERS:
            values = [r[c] * 1e9 for r in reps if c in r]  # kInvert counters are seconds
            if values:
                counters.append(f"{c} {fmt_time(statistics.median(values))} "
                                f"({fmt_time(min(values))}-{fmt_time(max(values))})")
        print(f"| {short} | {len(reps)} | {fmt_time(statistics.median(real))} "
              f"({fmt_time(min(real))}-{fmt_time(max(real))}) | "
              f"{fmt_time(statistics.median(cpu))} | {'; '.join(counters)} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
