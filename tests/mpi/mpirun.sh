#!/bin/sh
# Launches an MPI program for CTest: mpirun.sh MPIEXEC NP PROGRAM [ARGS...]. Oversubscribed
# and unbound, so that 8 processes run on a 2-core CI machine; --allow-run-as-root only when
# root (containers). Transports are Open MPI's own choice, but shared memory copies through
# the buffer, not process_vm_readv: containers without ptrace rights fail that single-copy
# path on large messages ("Read -1, expected ..."), a known Open MPI 4 problem in Docker.
mpiexec=$1
np=$2
shift 2
root=""
[ "$(id -u)" = 0 ] && root="--allow-run-as-root"
exec "$mpiexec" $root --oversubscribe --bind-to none --mca btl_vader_single_copy_mechanism none \
  -np "$np" "$@"
