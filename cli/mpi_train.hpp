// The main job's rank program on the processes of an MPI job (`ranklab run --backend mpi`):
// every process runs its rank, rank 0 collects the results and the trace for the checks the
// emulator's run gets. Built without Open MPI, it throws UsageError (mpi_unavailable.cpp).
#pragma once

#include "cli/cluster_run.hpp"

namespace ranklab {
class MpiSession;
}

namespace ranklab::cli {

/// Collective over the job. At rank 0: every rank's results (when the run is ok), the run's
/// report and trace (header: backend mpi, the hosts); elsewhere has_results is false.
template <typename Scalar>
ClusterRun<Scalar> run_main_job_on_mpi(MpiSession& session, const TrainSpec& spec,
                                       Algorithm algorithm, const Problem<Scalar>& problem);

extern template ClusterRun<float> run_main_job_on_mpi(MpiSession&, const TrainSpec&, Algorithm,
                                                      const Problem<float>&);
extern template ClusterRun<double> run_main_job_on_mpi(MpiSession&, const TrainSpec&, Algorithm,
                                                       const Problem<double>&);

}  // namespace ranklab::cli
