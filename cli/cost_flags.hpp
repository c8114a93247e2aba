// --cost and --topology, shared by `ranklab run` and `ranklab replay`: a cost model
// (traces/cost_model.hpp) under which the run's trace is timed (traces/virtual_time.hpp).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "emulator/options.hpp"
#include "traces/cost_model.hpp"
#include "traces/virtual_time.hpp"

namespace ranklab::cli {

struct CostFlags {
  std::string cost;      ///< alpha=SECONDS,beta=BYTES_PER_SECOND[,flops=FLOP_PER_SECOND]
  std::string topology;  ///< a topology file
};

/// Adds --cost and --topology (one or the other).
void add_cost_flags(CLI::App& command, CostFlags& flags);

/// The cost model the flags name, or none. Throws UsageError for a bad --cost (or both
/// flags), TraceError "FILE:LINE: reason" for a bad topology file.
std::optional<CostModel> to_cost_model(const CostFlags& flags);

/// Times `trace` under `model` with the run's send mode.
VirtualTimes time_trace(const Trace& trace, const CostModel& model, const SendMode& send_mode);

}  // namespace ranklab::cli
