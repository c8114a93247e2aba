#include "comm/run_report.hpp"

#include <fmt/format.h>

#include "traces/rank_list.hpp"
#include "traces/enum_names.hpp"
#include "traces/error.hpp"
#include "traces/event_text.hpp"

namespace ranklab {
namespace {

constexpr EnumNames<CulpritKind, 19> kCulpritKindNames(
    {"", "lost-message", "tag-mismatch", "source-mismatch", "group-mismatch",
     "missing-participant", "send-cycle", "recv-cycle", "collective-vs-p2p", "p2p-cycle",
     "deadlock", "collective-order", "collective-mismatch", "message-mismatch", "rank-failure",
     "watchdog", "nondeterminism", "potential-deadlock", "request-leak"});

}  // namespace

std::string_view to_string(CulpritKind kind) { return kCulpritKindNames[kind]; }

std::string plural(std::size_t n, std::string_view noun, std::string_view plural_noun) {
  if (n == 1) return fmt::format("1 {}", noun);
  if (plural_noun.empty()) return fmt::format("{} {}s", n, noun);
  return fmt::format("{} {}", n, plural_noun);
}

std::string_view without_rank_prefix(int rank, std::string_view text) {
  const std::string prefix = fmt::format("rank {}: ", rank);
  return text.starts_with(prefix) ? text.substr(prefix.size()) : text;
}

std::string ReportedOperation::describe() const { return call + describe_site(site); }

std::string_view culprit_kind_name(const Culprit& culprit) { return to_string(culprit.kind); }

std::string culprit_line(const Culprit& culprit) {
  if (culprit.kind == CulpritKind::none) return {};
  return fmt::format("culprit ({}): {}", culprit_kind_name(culprit), culprit.text);
}

std::string render_analysis(const FailureAnalysis& a) {
  std::string out = a.preamble;
  if (!a.preamble.empty() && !a.headline.empty()) out += "\n\n";
  if (!a.headline.empty()) out += a.headline + "\n";
  if (a.deadlock || a.blocked_total > 0) {
    out += "\nblocked operations:\n";
    std::size_t listed = 0;
    for (const BlockedCalls& calls : a.blocked_calls) {
      const std::string count =
          calls.ranks.size() > 1 ? fmt::format(" ({} ranks)", calls.ranks.size()) : "";
      out += fmt::format("  {}{}: {}\n", detail::ranks_text(calls.ranks), count,
                         calls.operation.describe());
      listed += calls.ranks.size();
    }
    if (a.blocked_total > listed) {
      out += fmt::format("  ... and {} more\n", plural(a.blocked_total - listed, "rank"));
    }
  }
  if (a.deadlock) {
    out += "\nwait-for cycles:\n";
    if (a.cycles.empty()) out += "  (none: the ranks wait for ranks that can no longer act)\n";
    for (const auto& cycle : a.cycles) out += "  " + detail::format_cycle(cycle) + "\n";
    out += "\nculprits:\n";
    if (a.culprits.empty()) out += "  (none identified)\n";
    for (const std::string& line : a.culprits) out += "  " + line + "\n";
  }
  if (!a.last_events.empty()) {
    out += "\nlast events:\n";
    const auto& last = a.last_events;
    for (std::size_t i = 0; i < last.size();) {
      if (!last[i].events.empty()) {
        out += fmt::format("  rank {}:\n", last[i].rank);
        for (const std::string& e : last[i].events) out += "    " + e + "\n";
        ++i;
        continue;
      }
      // Ranks in a row that completed nothing share a line: 511 of them at 512 ranks.
      std::vector<int> idle;
      for (; i < last.size() && last[i].events.empty(); ++i) idle.push_back(last[i].rank);
      out += "  " + detail::ranks_text(idle) + ": (no operations completed)\n";
    }
  }
  return out;
}

void RunReport::render_details() {
  details = render_analysis(analysis);
  if (const std::string line = culprit_line(culprit); !line.empty()) {
    if (!details.empty() && !details.ends_with('\n')) details += '\n';
    if (!details.empty()) details += '\n';
    details += line + "\n";
  }
}

const char* to_string(RankOutcome::State state) {
  switch (state) {
    case RankOutcome::State::finished: return "finished";
    case RankOutcome::State::failed: return "failed";
    case RankOutcome::State::deadlocked: return "deadlocked";
    case RankOutcome::State::aborted: return "aborted";
  }
  return "unknown";
}

int exit_code(RunStatus status) {
  switch (status) {
    case RunStatus::ok: return 0;
    case RunStatus::deadlock: return 3;
    case RunStatus::mismatch: return 4;
    case RunStatus::rank_failed: return 5;
    case RunStatus::unsafe: return 6;
  }
  return 5;
}

const char* to_string(RunStatus status) {
  switch (status) {
    case RunStatus::ok: return "ok";
    case RunStatus::deadlock: return "deadlock";
    case RunStatus::mismatch: return "mismatch";
    case RunStatus::rank_failed: return "rank failed";
    case RunStatus::unsafe: return "unsafe";
  }
  return "unknown";
}

void RunReport::rethrow_if_failed() const {
  if (root_cause) std::rethrow_exception(root_cause);
  if (status != RunStatus::ok) throw Error(summary);
}

}  // namespace ranklab
