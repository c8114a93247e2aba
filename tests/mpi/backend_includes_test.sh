#!/bin/sh
# The MPI backend builds on comm/ and collectives/, never on the emulator's internals
# (DESIGN.md §1: traces <- comm <- emulator <- collectives): every #include "emulator/..." in
# collectives/mpi fails this test. What it shares with the emulator (buffers, groups, the run
# report RunReport) lives in comm/.
#   backend_includes_test.sh SOURCE_DIR
found=$(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"emulator/' "$1/collectives/mpi")
if [ -n "$found" ]; then
  echo "collectives/mpi includes the emulator's internals:"
  echo "$found"
  exit 1
fi
echo "collectives/mpi includes nothing from emulator/"
