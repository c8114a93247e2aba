// Runs the parallel step on a cluster and collects every rank's result and the trace: the
// harness of the TP/PP/DP tests (the CLI's main job does the same with its flags).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "model/parallel_step.hpp"
#include "tests/support/cluster_fixture.hpp"
#include "tests/support/cluster_params.hpp"
#include "traces/sink.hpp"

namespace ranklab::testing {

/// How to run a job: scheduler policy, OS threads, collective algorithm, send mode, and
/// the step's schedule and TP communication.
struct JobOptions {
  std::string policy = "rank-order";
  int threads = 1;
  Algorithm algorithm = Algorithm::direct;
  std::string send_mode = "rendezvous";
  StepOptions step;
  DeviceKind device = DeviceKind::cpu;  ///< every rank's (ClusterOptions::device)
};

/// Every rank's result (by global rank), the trace and the report of one run.
template <typename Scalar>
struct JobRun {
  std::vector<RankResult<Scalar>> results;
  Trace trace;
  RunReport report;
};

/// Runs run_parallel_rank on config.world_size() ranks.
template <typename Scalar>
JobRun<Scalar> run_job(const ParallelConfig& config, const Problem<Scalar>& problem,
                       const JobOptions& job = {}) {
  ClusterOptions options;
  options.world_size = config.world_size();
  options.policy = SchedulePolicy::parse(job.policy);
  options.threads = job.threads;
  options.send_mode = SendMode::parse(job.send_mode);
  options.timeout = std::chrono::milliseconds(20'000);
  options.device = job.device;
  auto sink = std::make_shared<MemorySink>();
  options.trace_sink = sink;
  JobRun<Scalar> run;
  run.results.resize(static_cast<std::size_t>(config.world_size()));
  run.report = run_ranks(
      options,
      [&](Communicator& world) {
        // Each rank writes only its own slot, so threads never share an element.
        run.results[static_cast<std::size_t>(world.rank())] =
            run_parallel_rank<Scalar>(world, config, problem, job.step);
      },
      job.algorithm);
  run.trace = sink->trace();
  return run;
}

}  // namespace ranklab::testing
