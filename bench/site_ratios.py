#!/usr/bin/env python3
"""Reads site_bench's Google Benchmark JSON (stdin) and prints, per benchmark, the time
with call sites on and off and their ratio: the cost of recording sites, from one run."""
import json
import re
import sys


def main():
    runs = json.load(sys.stdin)["benchmarks"]
    times = {}
    for run in runs:
        if run.get("run_type") == "aggregate":
            continue
        name = run["name"]
        sites = re.search(r"sites:(\d)", name)
        if not sites:
            continue
        key = re.sub(r"sites:\d/?", "", name).rstrip("/")
        times.setdefault(key, {})[sites.group(1)] = run["real_time"], run["time_unit"]
    print(f"{'benchmark':<40} {'sites off':>12} {'sites on':>12} {'on/off':>7}")
    for key, by in times.items():
        if "0" not in by or "1" not in by:
            continue
        (off, unit), (on, _) = by["0"], by["1"]
        print(f"{key:<40} {off:>10.2f}{unit:>2} {on:>10.2f}{unit:>2} {on / off:>7.3f}")


if __name__ == "__main__":
    main()
