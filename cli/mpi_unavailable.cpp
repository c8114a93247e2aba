// The MPI entry points of a ranklab built without Open MPI (RANKLAB_MPI=OFF, or AUTO without
// its development files): they say how to get it.
#include "cli/mpi_command.hpp"
#include "traces/error.hpp"

namespace ranklab::cli {
namespace {

[[noreturn]] void unavailable() {
  throw UsageError(
      "--backend mpi: this ranklab was built without Open MPI (install openmpi-bin "
      "libopenmpi-dev and configure again, or pass -DRANKLAB_MPI=ON to insist)");
}

}  // namespace

int run_command_on_mpi(const RunFlags&) { unavailable(); }

}  // namespace ranklab::cli
