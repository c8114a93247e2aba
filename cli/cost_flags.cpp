#include "cli/cost_flags.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>

#include "comm/errors.hpp"
#include "traces/quote_input.hpp"
#include "traces/text.hpp"

namespace ranklab::cli {

void add_cost_flags(CLI::App& command, CostFlags& flags) {
  command.add_option("--cost", flags.cost,
                     "time the run under a cost model: alpha=SECONDS,beta=BYTES_PER_SECOND"
                     "[,flops=FLOP_PER_SECOND][,layer=SECONDS] (latency, bandwidth, compute "
                     "rate, a layer's forward time: twice that for a backward)");
  command.add_option("--topology", flags.topology,
                     "time the run on the machine a topology file describes (README, "
                     "\"Cost model\")");
  command.add_option("--slow", flags.slow,
                     "with --cost or --topology: rank R's compute takes F times as long, "
                     "R=xF (e.g. 3=x3; repeat for more ranks)");
}

RankSlowdown parse_rank_slowdown(std::string_view text, std::string_view what) {
  const std::size_t eq = text.find('=');
  const auto fail = [&](std::string_view reason) -> RankSlowdown {
    throw UsageError(fmt::format("{} {}: {} (expected RANK=xFACTOR, e.g. 3=x3)", what,
                                 quote_input(text), reason));
  };
  if (eq == std::string_view::npos) return fail("no '='");
  const auto rank = parse_whole<int>(text.substr(0, eq));
  if (!rank || *rank < 0) return fail("the rank is not a whole number >= 0");
  std::string_view factor_text = text.substr(eq + 1);
  if (!factor_text.empty() && (factor_text.front() == 'x' || factor_text.front() == 'X')) {
    factor_text.remove_prefix(1);
  }
  const auto factor = parse_whole<double>(factor_text);
  if (!factor || !(*factor > 0) || !std::isfinite(*factor)) {
    return fail("the factor is not a number > 0");
  }
  return {*rank, *factor};
}

void check_slowed_ranks(const CostModel& model, int world_size) {
  for (const auto& [rank, factor] : model.topology().compute_factor) {
    if (rank >= world_size) {
      throw UsageError(fmt::format("--slow {}=x{:g}: rank {} is not in a world of {} ranks", rank,
                                   factor, rank, world_size));
    }
  }
}

std::optional<CostModel> to_cost_model(const CostFlags& flags) {
  if (!flags.cost.empty() && !flags.topology.empty()) {
    throw UsageError("--cost and --topology: give one or the other");
  }
  if (flags.cost.empty() && flags.topology.empty()) {
    if (!flags.slow.empty()) {
      throw UsageError(
          "--slow needs a cost model: add --cost alpha=...,beta=... or --topology FILE");
    }
    return std::nullopt;
  }
  CostModel model =
      !flags.cost.empty() ? CostModel::parse(flags.cost) : CostModel::load(flags.topology);
  for (const std::string& text : flags.slow) {
    const RankSlowdown slow = parse_rank_slowdown(text, "--slow");
    model.set_compute_factor(slow.rank, slow.factor);
  }
  return model;
}

VirtualTimes time_trace(const Trace& trace, const CostModel& model, const SendMode& send_mode) {
  check_slowed_ranks(model, trace.header.world_size);
  VirtualTimeOptions options;
  if (send_mode.kind == SendMode::Kind::eager) options.eager_limit = UINT64_MAX;
  if (send_mode.kind == SendMode::Kind::eager_upto) options.eager_limit = send_mode.eager_limit;
  return simulate(trace, model, options);
}

}  // namespace ranklab::cli
