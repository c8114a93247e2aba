// The MPI entry points of a ranklab built without Open MPI (RANKLAB_MPI=OFF, or AUTO without
// its development files): they say how to get it.
#include "cli/mpi_command.hpp"
#include "cli/mpi_train.hpp"
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

template <typename Scalar>
ClusterRun<Scalar> run_main_job_on_mpi(MpiSession&, const TrainSpec&, Algorithm,
                                       const Problem<Scalar>&) {
  unavailable();
}

template ClusterRun<float> run_main_job_on_mpi(MpiSession&, const TrainSpec&, Algorithm,
                                               const Problem<float>&);
template ClusterRun<double> run_main_job_on_mpi(MpiSession&, const TrainSpec&, Algorithm,
                                                const Problem<double>&);

}  // namespace ranklab::cli
