#include "cli/cost_flags.hpp"

#include <cstdint>

#include "comm/errors.hpp"

namespace ranklab::cli {

void add_cost_flags(CLI::App& command, CostFlags& flags) {
  command.add_option("--cost", flags.cost,
                     "time the run under a cost model: alpha=SECONDS,beta=BYTES_PER_SECOND"
                     "[,flops=FLOP_PER_SECOND][,layer=SECONDS] (latency, bandwidth, compute "
                     "rate, a layer's forward time: twice that for a backward)");
  command.add_option("--topology", flags.topology,
                     "time the run on the machine a topology file describes (README, "
                     "\"Cost model\")");
}

std::optional<CostModel> to_cost_model(const CostFlags& flags) {
  if (!flags.cost.empty() && !flags.topology.empty()) {
    throw UsageError("--cost and --topology: give one or the other");
  }
  if (!flags.cost.empty()) return CostModel::parse(flags.cost);
  if (!flags.topology.empty()) return CostModel::load(flags.topology);
  return std::nullopt;
}

VirtualTimes time_trace(const Trace& trace, const CostModel& model, const SendMode& send_mode) {
  VirtualTimeOptions options;
  if (send_mode.kind == SendMode::Kind::eager) options.eager_limit = UINT64_MAX;
  if (send_mode.kind == SendMode::Kind::eager_upto) options.eager_limit = send_mode.eager_limit;
  return simulate(trace, model, options);
}

}  // namespace ranklab::cli
