#!/usr/bin/env bash
# `ranklab run --backend mpi` end to end, as a user runs it: the main job with its checks
# and its trace (identical to the emulator's for ranklab diff), --steps N checked step by
# step as on the emulator, -np not matching the layout,
# hangs that become exit 3 and a trace whose replay on the emulator prints the emulator's own
# culprit line, a --check-collectives mismatch (exit 4) and a failing rank (exit 5).
#   cli_mpi_test.sh MPIRUN_SH MPIEXEC RANKLAB
set -u
mpirun_sh=$1
mpiexec=$2
ranklab=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
failures=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# mpi NP ARGS...: runs ranklab on NP processes; sets $out and $code.
mpi() {
  local np=$1
  shift
  out=$(timeout 90 "$mpirun_sh" "$mpiexec" "$np" "$ranklab" run --backend mpi "$@" 2>/dev/null)
  code=$?
}

expect_code() {  # WANT WHAT
  [ "$code" = "$1" ] || fail "$2: exit $code, expected $1; output:"$'\n'"$out"
}

expect_line() {  # TEXT WHAT
  grep -qF -- "$1" <<<"$out" || fail "$2: no line with '$1' in:"$'\n'"$out"
}

# The main job on 8 processes, direct and ring: every check, a trace equal to the emulator's.
for algo in direct ring; do
  mpi 8 --algo "$algo" --trace "mpi-$algo.jsonl"
  expect_code 0 "main job --algo $algo"
  expect_line "result: ok: 8 ranks finished; every check passed" "main job --algo $algo"
  "$ranklab" run --algo "$algo" --trace "emu-$algo.jsonl" >/dev/null
  diff_out=$("$ranklab" diff "emu-$algo.jsonl" "mpi-$algo.jsonl")
  grep -q "^identical: 8 ranks" <<<"$diff_out" || fail "diff --algo $algo: $diff_out"
  grep -q '"backend":"mpi","batch".*"hosts":\[' "mpi-$algo.jsonl" || fail "trace header: $(head -c 400 "mpi-$algo.jsonl")"
done

# --no-trace writes no trace, as on the emulator (it wrote and overwrote traces/main.jsonl).
rm -rf traces
mpi 8 --no-trace
expect_code 0 "main job --no-trace"
[ ! -e traces ] || fail "--no-trace: wrote $(ls -R traces)"
grep -q "^trace: " <<<"$out" && fail "--no-trace: printed a trace line"

# MPI's own collectives: the checks pass within their tolerance.
mpi 8 --algo mpi
expect_code 0 "main job --algo mpi"
expect_line "every check passed" "main job --algo mpi"

# -np not matching the layout: one line from rank 0, exit 1.
mpi 4
expect_code 1 "-np 4"
[ -z "$out" ] || fail "-np 4 printed on stdout: $out"
err=$(timeout 60 "$mpirun_sh" "$mpiexec" 4 "$ranklab" run --backend mpi 2>&1 >/dev/null |
      grep -c "^ranklab: error: mpirun -np 4 does not match the layout: TP2 PP2 DP2")
[ "$err" = 1 ] || fail "-np 4: $err error lines, expected 1"

# --steps N: the emulator's rank program, every step checked and gathered to rank 0; the
# report's checks and the trace are the emulator's (but the cluster and time lines).
mpi 8 --steps 3 --trace mpi-steps.jsonl
expect_code 0 "--steps 3"
expect_line "result: ok: 8 ranks finished; every check passed" "--steps 3"
"$ranklab" run --steps 3 --trace emu-steps.jsonl >emu-steps.txt
report_body() { grep -v -e '^cluster:' -e '^time:' -e '^trace:'; }
steps_diff=$(diff <(report_body <emu-steps.txt) <(report_body <<<"$out"))
[ -z "$steps_diff" ] || fail "--steps 3: the report differs from the emulator's:"$'\n'"$steps_diff"
"$ranklab" diff emu-steps.jsonl mpi-steps.jsonl | grep -q "^identical: 8 ranks" ||
  fail "--steps 3: the MPI trace differs from the emulator's"

# Hangs: --timeout-ms turns them into exit 3 and a trace; its replay names the emulator's
# culprit, and the trace is the emulator's own.
for scenario in send-send:2 missing-barrier:4 tag-mismatch:4 pp-both-send:4 opposite-group-order:4; do
  name=${scenario%%:*}
  np=${scenario##*:}
  mpi "$np" --scenario "$name" --timeout-ms 1000 --trace "$name.jsonl"
  expect_code 3 "$name"
  expect_line "culprit (watchdog): rank " "$name"
  ! grep -qF "culprit (watchdog): watchdog:" <<<"$out" || fail "$name: the culprit line says watchdog twice"
  want=$("$ranklab" run --scenario "$name" --trace "emu-$name.jsonl" | grep "^culprit (")
  got=$("$ranklab" replay "$name.jsonl" | grep "^culprit (")
  [ -n "$want" ] && [ "$got" = "$want" ] || fail "$name replay: '$got', expected '$want'"
  "$ranklab" diff "emu-$name.jsonl" "$name.jsonl" | grep -q "^identical" ||
    fail "$name: the MPI trace differs from the emulator's"
done

# The watchdog's lines name global ranks and call sites, as the emulator's reports do (the
# peer of rank 1's send in pp[1,3] is global rank 3, its group rank 1).
mpi 4 --scenario pp-both-send --timeout-ms 1000 --no-trace
expect_line "rank 1 waited more than 1000 ms in send to rank 3 tag 0 in pp[1,3] (16 x f32), op #3 at cli/scenarios/pipeline.cpp:" "pp-both-send watchdog"
expect_line "rank 3 waited more than 1000 ms in send to rank 1 tag 1 in pp[1,3] (16 x f32), op #3 at cli/scenarios/pipeline.cpp:" "pp-both-send watchdog"

# A mismatch that --check-collectives catches before anything hangs: exit 4, one table.
mpi 4 --scenario collective-mismatch --check-collectives
expect_code 4 "collective-mismatch"
expect_line "culprit (collective-mismatch): rank 3 called all_reduce(sum, f32, count=17)" "collective-mismatch"
expect_line "rank 3 is the odd one: 1 rank vs 3" "collective-mismatch"
[ "$(grep -c "collective mismatch in world" <<<"$out")" -ge 1 ] || fail "collective-mismatch: no table"

# A rank that throws ends the job at once: exit 5, the root cause named.
mpi 4 --scenario crash
expect_code 5 "crash"
expect_line "culprit (rank-failure): rank 3 failed first" "crash"

# Processes given different flags: one line from rank 0 naming the flag and the ranks, exit 1
# (with --trace on one process only, the job waited forever, past the watchdog).
err=$(timeout 60 "$mpirun_sh" "$mpiexec" 1 "$ranklab" run --backend mpi --scenario ring \
        --timeout-ms 1000 --trace t.jsonl : -np 1 "$ranklab" run --backend mpi --scenario ring \
        --timeout-ms 1000 --no-trace 2>&1 >/dev/null)
code=$?
out=$err
expect_code 1 "--trace on one process only"
expect_line "ranklab: error: the MPI processes were given different flags: --trace t.jsonl on rank 0; no --trace on rank 1" \
  "--trace on one process only"
[ "$(grep -c "^ranklab: error" <<<"$err")" = 1 ] || fail "--trace on one process only: $err"

# --json where the job ends in MPI_Abort (exit 4, 5): the report as one JSON document
# (docs/json.md), with the text's culprit line; it printed the text.
for case in "4 collective-mismatch --check-collectives" "5 crash"; do
  read -r want name extra <<<"$case"
  mpi 4 --scenario "$name" $extra
  text_culprit=$(grep "^culprit (" <<<"$out")
  mpi 4 --scenario "$name" $extra --json
  expect_code "$want" "$name --json"
  summary=$(python3 -c 'import json, sys
d = json.load(sys.stdin)
print(d["schema"], d["command"], d["program"], d["scenario"], d["exit_code"], d["trace"] == "")
print(d["culprit"]["line"])' <<<"$out" 2>&1)
  [ "$summary" = "ranklab-report/1 run scenario $name $want True"$'\n'"$text_culprit" ] ||
    fail "$name --json: '$summary', expected the document with '$text_culprit'; output:"$'\n'"$out"
done

# Flags only the emulator has: one line, exit 1.
mpi 2 --scenario ring --fault kill:1@0
expect_code 1 "--fault"

if [ "$failures" -ne 0 ]; then
  echo "$failures failures"
  exit 1
fi
echo "all passed"
