// One run of the main job's rank program, on the emulator or on MPI processes: what the
// checks need (train_command.cpp).
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "cli/train_report.hpp"
#include "collectives/options.hpp"
#include "comm/run_report.hpp"
#include "model/parallel_step.hpp"
#include "traces/event.hpp"

namespace ranklab::cli {

template <typename Scalar>
struct ClusterRun {
  std::vector<RankResult<Scalar>> results;  ///< by global rank
  RunReport report;
  Trace trace;
  double ms = 0.0;
  /// False on the MPI processes other than rank 0: they hold no results and print nothing.
  bool has_results = true;
};

/// The trace header's config of the main job `spec` run with `algorithm`.
nlohmann::json train_trace_config(const TrainSpec& spec, Algorithm algorithm);

}  // namespace ranklab::cli
