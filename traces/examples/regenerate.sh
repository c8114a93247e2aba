#!/usr/bin/env bash
# Re-records the example traces with the `ranklab` command. Run from anywhere:
#   traces/examples/regenerate.sh [path/to/ranklab]     (default: build/cli/ranklab)
# Each trace is byte-for-byte reproducible (same program, policy and seed: same file).
# The seed step's payload hashes depend on the dense kernels' instruction set: the examples
# are recorded on the x86-64 baseline kernels, which compute the same bits on any x86-64 for
# shapes this small (Eigen's products block by the CPU's cache sizes: here, one block).
set -uo pipefail
export RANKLAB_ISA=baseline
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
RANKLAB="${1:-$ROOT/build/cli/ranklab}"
cd "$ROOT"
record() {  # record FILE ARGS...: exit codes 3 (deadlock) are the point of some examples
  local file="traces/examples/$1"
  shift
  "$RANKLAB" run "$@" --trace "$file" >/dev/null
  echo "$file (exit $?)"
}
record seed_step_w8.jsonl  # the main job: the seed's TP/PP/DP training step
record allreduce_w8.jsonl --scenario allreduce
record allreduce_ring_w4.jsonl --scenario allreduce --world 4 --count 8 --algo ring
record allreduce_ring_w4_random7.jsonl --scenario allreduce --world 4 --count 8 --algo ring --policy random:7
record send_send_deadlock.jsonl --scenario send-send
record missing_barrier_deadlock.jsonl --scenario missing-barrier
record wildcard_race.jsonl --scenario wildcard-race
record wildcard_race_random3.jsonl --scenario wildcard-race --policy random:3
