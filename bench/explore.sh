#!/usr/bin/env bash
# bench/explore.sh: how many schedules per second `ranklab explore` runs on the seed's
# 8-rank hybrid step (the main job: TP2 PP2 DP2, B8 S16 H32 I64 L4, every schedule checked
# against the dense reference, its results and per-rank trace compared with rank order's).
# Runs
#     ranklab explore --run --runs RUNS --jobs J --strategy S
# REPS times for each J and S, alternating the configurations so that machine noise spreads
# over all of them, and prints a Markdown table: schedules/s (median, min-max) from
# explore's own result line, and the wall time of the whole command.
#
# Usage: bench/explore.sh [RANKLAB_BINARY]      (default: build/cli/ranklab)
# Environment: RUNS=400  JOBS="1 2"  STRATEGIES="random pct"  REPS=3
set -u
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
RANKLAB="${1:-$ROOT/build/cli/ranklab}"
RUNS="${RUNS:-400}"
JOBS="${JOBS:-1 2}"
STRATEGIES="${STRATEGIES:-random pct}"
REPS="${REPS:-3}"

if [ ! -x "$RANKLAB" ]; then
  echo "explore.sh: no ranklab binary at $RANKLAB (build it, or pass its path)" >&2
  exit 1
fi
WORK="$(mktemp -d /tmp/ranklab-explore.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT

declare -A rates walls
for rep in $(seq "$REPS"); do
  for jobs in $JOBS; do
    for strategy in $STRATEGIES; do
      key="$jobs $strategy"
      start=$(date +%s.%N)
      # explore writes the main job's files nowhere; run it in a scratch directory anyway.
      out=$(cd "$WORK" && "$RANKLAB" explore --run --runs "$RUNS" --jobs "$jobs" \
              --strategy "$strategy" 2>/dev/null)
      code=$?
      end=$(date +%s.%N)
      if [ "$code" -ne 0 ]; then
        echo "explore.sh: explore exited $code:" >&2
        echo "$out" >&2
        exit 1
      fi
      rate=$(echo "$out" | sed -n 's/.*, \([0-9]*\) schedules\/s).*/\1/p')
      rates[$key]="${rates[$key]:-} $rate"
      walls[$key]="${walls[$key]:-} $(echo "$end - $start" | bc)"
    done
  done
done

stats() {  # median (min-max) of the numbers given
  tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{ v[NR] = $1 } END {
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%g (%g-%g)", m, v[1], v[NR] }'
}

echo "| jobs | strategy | schedules/s, median (min-max) | wall s for $RUNS schedules, median (min-max) |"
echo "| --- | --- | --- | --- |"
for jobs in $JOBS; do
  for strategy in $STRATEGIES; do
    key="$jobs $strategy"
    echo "| $jobs | $strategy | $(echo "${rates[$key]}" | stats) | $(echo "${walls[$key]}" | stats) |"
  done
done
echo
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); $REPS repetitions"
