#!/usr/bin/env bash
# Large traces at full speed (issue 17 §3): makes a 1 M-event trace with ranklab itself and
# times the trace tools on it, one core, with /usr/bin/time (wall, CPU, peak RSS).
#
#   bench/big_trace.sh [RANKLAB] [DIR]     default: build/cli/ranklab, /tmp/ranklab-big
#
# The trace: a ring all_reduce (`--algo ring`) of 512 i64 over 512 ranks: 2 x 511 steps of a
# send and a receive per rank plus the closing barrier, 1,047,040 events (~260 MB with hashes
# and call sites). big_b.jsonl is the same program under another schedule (diff: identical).
set -euo pipefail
RANKLAB="${1:-build/cli/ranklab}"
DIR="${2:-/tmp/ranklab-big}"
mkdir -p "$DIR"
run_one=(taskset -c 0)  # one core: the floors are per core
command -v taskset >/dev/null || run_one=()

if [ ! -f "$DIR/big.jsonl" ] || [ ! -f "$DIR/big_b.jsonl" ]; then
  "$RANKLAB" run --scenario allreduce --algo ring --world 512 --count 512 \
    --trace "$DIR/big.jsonl" >/dev/null
  "$RANKLAB" run --scenario allreduce --algo ring --world 512 --count 512 --policy random:7 \
    --trace "$DIR/big_b.jsonl" >/dev/null
fi
echo "trace: $(wc -l <"$DIR/big.jsonl") lines, $(du -m "$DIR/big.jsonl" | cut -f1) MB"

measure() {  # measure NAME COMMAND...: one line of wall s, CPU s, peak RSS MB, exit code
  local name=$1 rc=0
  shift
  /usr/bin/time -f "%e %U %S %M" -o "$DIR/time.txt" "${run_one[@]}" "$@" >"$DIR/$name.out" 2>"$DIR/$name.err" || rc=$?
  read -r wall user sys rss <"$DIR/time.txt"
  printf '%-8s wall %6.2f s  cpu %6.2f s  peak %5d MB  exit %d\n' "$name" "$wall" \
    "$(echo "$user + $sys" | bc)" $((rss / 1024)) "$rc"
}

measure replay "$RANKLAB" replay "$DIR/big.jsonl"
measure stats "$RANKLAB" stats "$DIR/big.jsonl"
measure diff "$RANKLAB" diff "$DIR/big.jsonl" "$DIR/big_b.jsonl"
measure export "$RANKLAB" export "$DIR/big.jsonl" --perfetto "$DIR/big.perfetto.json"
echo "perfetto: $(du -m "$DIR/big.perfetto.json" | cut -f1) MB"
