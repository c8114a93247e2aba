#include "cli/html_verdict.hpp"

#include <fmt/format.h>

#include "cli/cluster_flags.hpp"
#include "comm/run_report.hpp"
#include "emulator/replay.hpp"
#include "traces/error.hpp"

namespace ranklab::cli {
namespace {

HtmlVerdict verdict_of(const ReplayReport& report, const std::string& replay_args) {
  const RunReport& run = report.run;
  HtmlVerdict verdict{.status = to_string(run.status),
                      .summary = run.summary,
                      .headline = run.analysis.headline,
                      .culprit_kind = std::string(culprit_kind_name(run.culprit)),
                      .culprit = culprit_line(run.culprit),
                      .cycles = run.analysis.cycles};
  for (const ReplayStop& stop : report.stops) {
    if (stop.in_progress) verdict.blocked.emplace_back(stop.rank, stop.rank_seq);
  }
  verdict.note = fmt::format(
      "Found by replaying the trace as `ranklab replay {}` does (policy rank-order, 1 thread, "
      "rendezvous sends); ",
      replay_args);
  verdict.note += report.reproduced()
                      ? "the replay reproduced the recording."
                      : fmt::format("the replay did not reproduce the recording: {} of {} "
                                    "operations differ or were never issued.",
                                    report.diverging_operations, report.recorded_operations);
  return verdict;
}

}  // namespace

HtmlVerdict diagnose_for_html(const Trace& trace, const std::string& replay_args) {
  ReplayOptions options;
  options.cluster = to_cluster_options(ClusterFlags{}, trace.header.world_size);
  try {
    return verdict_of(replay_trace(trace, options), replay_args);
  } catch (const TraceError& e) {
    return {.note = fmt::format("Not diagnosed: the replay refused the trace: {}", e.what())};
  }
}

}  // namespace ranklab::cli
