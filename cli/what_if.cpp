#include "cli/what_if.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "cli/cost_flags.hpp"
#include "comm/errors.hpp"
#include "traces/quote_input.hpp"
#include "traces/text.hpp"
#include "traces/wait_analysis.hpp"

namespace ranklab::cli {
namespace {

constexpr const char* kWhatIfSyntax = "slow:RANK=xFACTOR or skip:RANK@OP";

const TraceEvent* find_operation(const Trace& trace, int rank, std::uint64_t op) {
  if (rank < 0 || static_cast<std::size_t>(rank) >= trace.ranks.size()) return nullptr;
  const auto& events = trace.ranks[static_cast<std::size_t>(rank)];
  const auto it = std::find_if(events.begin(), events.end(),
                               [&](const TraceEvent& e) { return e.rank_seq == op; });
  return it == events.end() ? nullptr : &*it;
}

void check_rank(const Trace& trace, const WhatIf& what) {
  if (what.rank >= trace.header.world_size) {
    throw UsageError(fmt::format("--what-if {}: rank {} is not in the trace's world of {} ranks",
                                 quote_input(what.text), what.rank, trace.header.world_size));
  }
}

}  // namespace

WhatIf parse_what_if(std::string_view text) {
  WhatIf what;
  what.text = std::string(text);
  const std::size_t colon = text.find(':');
  const std::string_view kind = text.substr(0, colon);
  const std::string_view rest =
      colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1);
  const std::string flag = fmt::format("--what-if {}:", kind);
  if (kind == "slow" && colon != std::string_view::npos) {
    const RankSlowdown slow = parse_rank_slowdown(rest, flag);
    what.kind = WhatIf::Kind::slow;
    what.rank = slow.rank;
    what.factor = slow.factor;
    return what;
  }
  if (kind == "skip" && colon != std::string_view::npos) {
    const std::size_t at = rest.find('@');
    const auto rank = parse_whole<int>(rest.substr(0, at));
    const auto op = at == std::string_view::npos ? std::nullopt
                                                 : parse_whole<std::uint64_t>(rest.substr(at + 1));
    if (!rank || *rank < 0 || !op) {
      throw UsageError(
          fmt::format("--what-if {}: expected skip:RANK@OP (a rank >= 0 and the op # "
                      "reports print, e.g. skip:3@17)",
                      quote_input(text)));
    }
    what.kind = WhatIf::Kind::skip;
    what.rank = *rank;
    what.op = *op;
    return what;
  }
  throw UsageError(fmt::format("--what-if {}: expected {}", quote_input(text), kWhatIfSyntax));
}

Trace skip_operation(const Trace& trace, const WhatIf& what) {
  check_rank(trace, what);
  if (find_operation(trace, what.rank, what.op) == nullptr) {
    throw UsageError(fmt::format("--what-if {}: rank {} has no op #{} (it has {} operations)",
                                 quote_input(what.text), what.rank, what.op,
                                 trace.ranks[static_cast<std::size_t>(what.rank)].size()));
  }
  Trace out = trace;
  auto& events = out.ranks[static_cast<std::size_t>(what.rank)];
  std::erase_if(events, [&](const TraceEvent& e) { return e.rank_seq == what.op; });
  for (TraceEvent& e : events) std::erase(e.in_flight, what.op);
  return out;
}

std::string describe_skip(const Trace& trace, const WhatIf& what) {
  const TraceEvent* e = find_operation(trace, what.rank, what.op);
  return fmt::format(
      "rank {} skips {}", what.rank,
      e != nullptr ? describe_operation(*e, trace.header) : fmt::format("op #{}", what.op));
}

SlowPrediction predict_slow(const Trace& trace, const WhatIf& what,
                            const std::optional<CostModel>& cost, const SendMode& send_mode) {
  if (!cost) {
    throw UsageError(
        fmt::format("--what-if {} needs a cost model to time the step: add --cost "
                    "alpha=...,beta=...[,layer=...] or --topology FILE",
                    quote_input(what.text)));
  }
  check_rank(trace, what);
  CostModel slowed = *cost;
  slowed.set_compute_factor(what.rank, cost->compute_factor(what.rank) * what.factor);
  VirtualTimeOptions options;
  if (send_mode.kind == SendMode::Kind::eager) options.eager_limit = UINT64_MAX;
  if (send_mode.kind == SendMode::Kind::eager_upto) options.eager_limit = send_mode.eager_limit;
  SlowPrediction p{time_trace(trace, *cost, send_mode), {}, slowed, 0};
  options.rematch_any_source = true;
  p.predicted = simulate(trace, slowed, options);
  for (const auto& events : trace.ranks) {
    p.any_source_receives += static_cast<std::size_t>(
        std::count_if(events.begin(), events.end(),
                      [](const TraceEvent& e) { return e.op == OpKind::recv && e.any_source; }));
  }
  return p;
}

namespace {

/// "still completes: ..." or "now hangs: ...".
std::string outcome_text(const SlowPrediction& p, const WhatIf& what, const Trace& trace) {
  std::string matching =
      p.any_source_receives == 0
          ? "no receive from any source: timing cannot change which messages match"
          : fmt::format(
                "{} receives from any source matched in virtual arrival order, {} of them "
                "from another sender than recorded",
                p.any_source_receives, p.predicted.rematched_receives);
  if (p.predicted.complete) {
    return fmt::format("still completes: rank {} is a straggler ({})", what.rank, matching);
  }
  std::string stuck;
  for (std::size_t r = 0; r < p.predicted.ranks.size(); ++r) {
    const RankTime& t = p.predicted.ranks[r];
    if (t.finished || t.stalled_on >= trace.ranks[r].size()) continue;
    stuck += fmt::format("{}rank {} waits forever in {}", stuck.empty() ? "" : "; ", r,
                         describe_operation(trace.ranks[r][t.stalled_on], trace.header));
  }
  return fmt::format("now hangs: a latent bug that rank {}'s timing exposes ({}): {}", what.rank,
                     matching, stuck);
}

}  // namespace

std::string format_slow_prediction(const SlowPrediction& p, const WhatIf& what,
                                   const Trace& trace) {
  std::string out;
  auto it = std::back_inserter(out);
  const double before = p.baseline.step_seconds, after = p.predicted.step_seconds;
  fmt::format_to(it, "\nwhat if rank {} computed x{:g} ({}):\n", what.rank, what.factor, what.text);
  fmt::format_to(it, "predicted step: {} (as recorded: {}{})\n", seconds_text(after),
                 seconds_text(before),
                 before > 0 ? fmt::format(", {:+.1f}%", (after / before - 1) * 100) : "");
  out += format_virtual_times(p.predicted, p.model);
  fmt::format_to(it, "outcome: {}\n", outcome_text(p, what, trace));
  return out;
}

nlohmann::json slow_prediction_to_json(const SlowPrediction& p, const WhatIf& what,
                                       const Trace& trace) {
  return {{"what_if", what.text},
          {"kind", "slow"},
          {"rank", what.rank},
          {"factor", what.factor},
          {"step_s", p.predicted.step_seconds},
          {"recorded_step_s", p.baseline.step_seconds},
          {"completes", p.predicted.complete},
          {"any_source_receives", p.any_source_receives},
          {"rematched_receives", p.predicted.rematched_receives},
          {"outcome", outcome_text(p, what, trace)},
          {"virtual_time", virtual_times_to_json(p.predicted, p.model)}};
}

}  // namespace ranklab::cli
