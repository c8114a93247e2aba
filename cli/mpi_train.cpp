#include "cli/mpi_train.hpp"

#include <chrono>

#include <spdlog/spdlog.h>

#include "cli/rank_result_wire.hpp"
#include "collectives/mpi/mpi_run.hpp"

namespace ranklab::cli {

template <typename Scalar>
ClusterRun<Scalar> run_main_job_on_mpi(MpiSession& session, const TrainSpec& spec,
                                       Algorithm algorithm, const Problem<Scalar>& problem) {
  MpiRunOptions options{.algorithm = algorithm, .record = true};
  options.trace_config = train_trace_config(spec, algorithm);
  options.trace_config["backend"] = "mpi";
  options.trace_config["hosts"] = job_hosts();
  if (session.options().library_collectives) options.trace_config["algorithm"] = "mpi";
  if (session.options().device != DeviceKind::cpu) {
    options.trace_config["device"] = to_string(session.options().device);
  }
  if (session.rank() == 0) {
    spdlog::info("starting {} MPI processes: {}", session.size(), spec.layout.describe());
  }
  RankResult<Scalar> mine;
  const auto start = std::chrono::steady_clock::now();
  MpiRun run = run_on_mpi(session, options, [&](Communicator& world) {
    mine = run_parallel_rank<Scalar>(world, spec.layout, problem, spec.step);
  });
  ClusterRun<Scalar> out;
  out.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
               .count();
  const std::vector<std::string> results = gather_to_rank0(encode_rank_result(mine));
  out.report = std::move(run.report);
  out.trace = std::move(run.trace);
  out.has_results = session.rank() == 0;
  if (out.has_results && out.report.ok()) {
    for (const std::string& bytes : results) out.results.push_back(decode_rank_result<Scalar>(bytes));
  }
  return out;
}

template ClusterRun<float> run_main_job_on_mpi(MpiSession&, const TrainSpec&, Algorithm,
                                               const Problem<float>&);
template ClusterRun<double> run_main_job_on_mpi(MpiSession&, const TrainSpec&, Algorithm,
                                                const Problem<double>&);

}  // namespace ranklab::cli
