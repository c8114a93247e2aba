// `ranklab run --backend mpi`, started by mpirun: every process runs one rank of the main
// job or of a --scenario over Open MPI (collectives/mpi); rank 0 prints the report and
// writes the trace, and every process exits with the run's code, so mpirun does too.
#pragma once

#include "cli/run_command.hpp"

namespace ranklab::cli {

/// Runs `flags` on the MPI job this process belongs to. Flags that only the emulator has
/// (--fault, --wait-graph) and a world that does not match `mpirun -np` are one line from
/// rank 0 and exit 1. Built without Open MPI: UsageError.
int run_command_on_mpi(const RunFlags& flags);

}  // namespace ranklab::cli
