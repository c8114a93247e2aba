#!/usr/bin/env bash
# bench/scale.sh: ranklab at scale. Runs
#     ranklab run --scenario allreduce --world N --count 1 --threads T
# (every rank: one all_reduce of one int64, checked against its closed form, then one
# barrier) under /usr/bin/time -v for each N and T, REPS times, alternating the
# configurations so that machine noise spreads over all of them, and prints a Markdown
# table: median wall time and peak RSS with min-max, exit codes.
#
# Usage: bench/scale.sh [RANKLAB_BINARY]      (default: build/cli/ranklab)
# Environment:
#   WORLDS="1024 16384 65536"  THREADS="1 2"  REPS=3
#   TIMEOUT_S=120   each run is killed after this many seconds (reported as a timeout);
#                   a configuration that timed out is not repeated, and larger worlds with
#                   the same thread count are skipped. A configuration that exits non-zero
#                   (e.g. 3: the cluster's own watchdog fired) is not repeated either.
#   LOG_DIR=...     where each run's output and `time -v` report go (default: a temp dir)
#   EXTRA_ARGS=...  more flags for `ranklab run` (e.g. "--timeout-ms 600000")
set -u
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
RANKLAB="${1:-$ROOT/build/cli/ranklab}"
WORLDS="${WORLDS:-1024 16384 65536}"
THREADS="${THREADS:-1 2}"
REPS="${REPS:-3}"
TIMEOUT_S="${TIMEOUT_S:-120}"
EXTRA_ARGS="${EXTRA_ARGS:-}"
LOG_DIR="${LOG_DIR:-$(mktemp -d /tmp/ranklab-scale.XXXXXX)}"
mkdir -p "$LOG_DIR"

if [ ! -x "$RANKLAB" ]; then
  echo "scale.sh: no ranklab binary at $RANKLAB (build it, or pass its path)" >&2
  exit 1
fi
if [ ! -x /usr/bin/time ]; then
  echo "scale.sh: needs GNU time: apt-get install -y time" >&2
  exit 1
fi

# Wall time is taken with a nanosecond clock around the run (time -v rounds to 10 ms).
now_ns() { date +%s%N; }
peak_kib() { sed -n 's/.*Maximum resident set size (kbytes): //p' "$1"; }

# "median (min-max)" of the numbers on stdin, formatted with $1 (printf format)
summary() {
  sort -g | awk -v f="$1" '{ v[NR] = $1 }
    END {
      if (NR == 0) { print "-"; exit }
      m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
      if (NR == 1) printf f "\n", m
      else printf f " (" f "-" f ")\n", m, v[1], v[NR]
    }'
}

declare -A timed_out   # "N T" -> 1
declare -A failed      # "N T" -> 1
declare -A wall rss codes

echo "ranklab: $RANKLAB (this script's checkout: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?'))" >&2
echo "logs: $LOG_DIR" >&2
for rep in $(seq 1 "$REPS"); do
  for t in $THREADS; do
    skip=0
    for n in $WORLDS; do
      key="$n $t"
      if [ "$skip" = 1 ] || [ -n "${timed_out[$key]:-}" ]; then
        skip=1
        continue
      fi
      [ -n "${failed[$key]:-}" ] && continue
      log="$LOG_DIR/world${n}_threads${t}_rep${rep}"
      echo "  rep $rep: --world $n --threads $t (load $(cut -d' ' -f1 /proc/loadavg))" >&2
      t0=$(now_ns)
      # time -v reports the largest RSS of its child tree (wait4's rusage): ranklab's.
      # shellcheck disable=SC2086
      /usr/bin/time -v -o "$log.time" timeout -k 5 "$TIMEOUT_S" \
        "$RANKLAB" run --scenario allreduce --world "$n" --count 1 --threads "$t" $EXTRA_ARGS \
        > "$log.out" 2>&1
      rc=$?
      t1=$(now_ns)
      secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
      codes[$key]="${codes[$key]:-}${codes[$key]:+,}$rc"
      if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        timed_out[$key]=1
        skip=1
        echo "    timed out after ${TIMEOUT_S} s" >&2
        continue
      fi
      if [ "$rc" != 0 ]; then
        failed[$key]=1
        echo "    exit $rc: $(grep -m1 '^result:' "$log.out")" >&2
      fi
      wall[$key]="${wall[$key]:-} $secs"
      rss[$key]="${rss[$key]:-} $(peak_kib "$log.time")"
      echo "    rc $rc, $secs s, $(peak_kib "$log.time") KiB" >&2
    done
  done
done

echo "| ranks | threads | wall time, s: median (min-max) | peak RSS, MiB: median (min-max) | exit codes |"
echo "| ---: | ---: | ---: | ---: | --- |"
for n in $WORLDS; do
  for t in $THREADS; do
    key="$n $t"
    if [ -n "${timed_out[$key]:-}" ]; then
      w="timeout (> ${TIMEOUT_S} s)"
      r="-"
    elif [ -z "${codes[$key]:-}" ]; then
      w="skipped (a smaller world timed out)"
      r="-"
    else
      w=$(tr ' ' '\n' <<< "${wall[$key]}" | grep . | summary "%.3f")
      r=$(tr ' ' '\n' <<< "${rss[$key]}" | grep . | awk '{ printf "%.1f\n", $1 / 1024 }' |
          summary "%.1f")
    fi
    echo "| $n | $t | $w | $r | ${codes[$key]:--} |"
  done
done
