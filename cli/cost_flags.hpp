// --cost and --topology, shared by `ranklab run` and `ranklab replay`: a cost model
// (traces/cost_model.hpp) under which the run's trace is timed (traces/virtual_time.hpp).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/options.hpp"
#include "traces/cost_model.hpp"
#include "traces/virtual_time.hpp"

namespace ranklab::cli {

struct CostFlags {
  std::string cost;      ///< alpha=SECONDS,beta=BYTES_PER_SECOND[,flops=FLOP_PER_SECOND]
  std::string topology;  ///< a topology file
  std::vector<std::string> slow;  ///< --slow RANK=xFACTOR, each a rank whose compute is slower
};

/// One rank's compute slowed (or sped up): `--slow 3=x3`, what-if `slow:3=x3`.
struct RankSlowdown {
  int rank = 0;
  double factor = 1;
};

/// Parses "R=xF" (or "R=F"): rank R's compute costs F times as much, F > 0. Throws
/// UsageError naming `what` (the flag or what-if as the user wrote it).
RankSlowdown parse_rank_slowdown(std::string_view text, std::string_view what);

/// Throws UsageError if the model slows a rank outside a world of `world_size` ranks.
void check_slowed_ranks(const CostModel& model, int world_size);

/// Adds --cost and --topology (one or the other), and --slow.
void add_cost_flags(CLI::App& command, CostFlags& flags);

/// The cost model the flags name, or none. Throws UsageError for a bad --cost (or both
/// flags, or --slow without either), TraceError "FILE:LINE: reason" for a bad topology file.
std::optional<CostModel> to_cost_model(const CostFlags& flags);

/// Times `trace` under `model` with the run's send mode; throws UsageError if the model
/// slows a rank the trace does not have.
VirtualTimes time_trace(const Trace& trace, const CostModel& model, const SendMode& send_mode);

}  // namespace ranklab::cli
