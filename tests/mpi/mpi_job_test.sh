#!/usr/bin/env bash
# A failing MPI job ends as the emulator's run ends (mpi_job_test.cpp's cases): the same exit
# code, and the report, with the emulator's culprit line, printed by rank 0 whichever process
# found the failure; no process left hanging.
#   mpi_job_test.sh MPIRUN_SH MPIEXEC MPI_JOB_TEST
set -u
mpirun_sh=$1
mpiexec=$2
program=$3
failures=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# check CASE NP WANT_CODE [TIMEOUT_MS]: rank 0 prints the emulator's culprit line, then the
# job's, identical (and a collective mismatch's table, identical); the job exits WANT_CODE
# (the emulator's too).
check() {
  local name=$1 np=$2 want=$3 timeout_ms=${4:-60000}
  local out code emulator mine
  out=$(timeout 90 "$mpirun_sh" "$mpiexec" "$np" --tag-output "$program" "$name" "$timeout_ms" \
        2>/dev/null)
  code=$?
  [ "$code" = "$want" ] || fail "$name: exit $code, expected $want; output:"$'\n'"$out"
  emulator=$(grep -F '[1,0]<stdout>:emulator: ' <<<"$out" | sed 's/^.*emulator: exit [0-9]* //')
  grep -qF "[1,0]<stdout>:emulator: exit $want " <<<"$out" ||
    fail "$name: the emulator does not exit $want:"$'\n'"$out"
  mine=$(grep -F '[1,0]<stdout>:culprit (' <<<"$out" | sed 's/^\[1,0\]<stdout>://')
  [ -n "$emulator" ] && [ "$mine" = "$emulator" ] ||
    fail "$name: rank 0 printed '$mine', the emulator '$emulator'; output:"$'\n'"$out"
  # A collective mismatch's table too, line by line (every member's call and op #).
  local want_table got_table
  # (The emulator's details go on past the table to its culprit line, checked above.)
  # The table runs from its title to the line before the culprit's.
  want_table=$(grep -F '[1,0]<stdout>:emulator table: ' <<<"$out" | sed 's/^.*emulator table: //' |
               sed -n '/^collective mismatch in /,/^culprit (/p' | grep -v '^culprit (')
  if [ -n "$want_table" ]; then
    got_table=$(grep -F '[1,0]<stdout>:' <<<"$out" | sed 's/^\[1,0\]<stdout>://' |
                sed -n '/^collective mismatch in /,/^culprit (/p' | grep -v '^culprit (')
    [ "$got_table" = "$want_table" ] ||
      fail "$name: rank 0's table differs from the emulator's:"$'\n'"$got_table"$'\n'"$want_table"
  fi
  if grep -qE '^\[1,[1-9][0-9]*\]<stdout>:culprit' <<<"$out"; then
    fail "$name: a rank other than 0 printed the report:"$'\n'"$out"
  fi
}

check dtype-message 2 4
check mismatch-while-rank0-waits 3 4
check subgroup-mismatch 4 4
check rank-throws 3 5
check skip-all-reduce 4 4
# ... and the rank blamed is the odd one, whichever process reports.
out=$(timeout 90 "$mpirun_sh" "$mpiexec" 4 --tag-output "$program" skip-all-reduce 60000 2>/dev/null)
grep -qF '[1,0]<stdout>:rank 0 is the odd one: 1 rank vs 3' <<<"$out" ||
  fail "skip-all-reduce: rank 0 is not blamed as the odd one:"$'\n'"$out"

# Without a timeout too, a rank 0 waiting for a message polls for reports.
check mismatch-while-rank0-waits 3 4 0

# Rank 0 inside MPI's own blocking collective (--algo mpi, no timeout) never polls: the
# process that found the mismatch prints the report itself after its grace period, and the
# job still ends (exit 4).
out=$(timeout 90 "$mpirun_sh" "$mpiexec" 3 --tag-output "$program" mismatch-while-rank0-in-mpi 0 mpi \
      2>/dev/null)
code=$?
[ "$code" = 4 ] || fail "rank 0 in MPI_Allreduce: exit $code, expected 4:"$'\n'"$out"
grep -q "^\[1,2\]<stdout>:culprit (message-mismatch): message mismatch in world: rank 1 " <<<"$out" ||
  fail "rank 0 in MPI_Allreduce: no report from rank 2:"$'\n'"$out"

if [ "$failures" -ne 0 ]; then
  echo "$failures failures"
  exit 1
fi
echo "all passed"
