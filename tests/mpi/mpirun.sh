#!/bin/sh
# Launches an MPI program for CTest: mpirun.sh MPIEXEC NP PROGRAM [ARGS...]. Oversubscribed
# and unbound, so that 8 processes run on a 2-core CI machine; --allow-run-as-root only when
# root (containers). Transports are Open MPI's own choice.
mpiexec=$1
np=$2
shift 2
root=""
[ "$(id -u)" = 0 ] && root="--allow-run-as-root"
exec "$mpiexec" $root --oversubscribe --bind-to none -np "$np" "$@"
