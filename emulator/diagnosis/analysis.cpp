#include "emulator/diagnosis/analysis.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "traces/rank_list.hpp"
#include "emulator/diagnosis/describe.hpp"

namespace ranklab::diagnosis {
namespace {

// "rank 3 finished (returned) while ranks 0, 1 wait for it", for each such rank.
void ended_while_waited_for(const FabricSnapshot& snapshot, const detail::WaitGraph& graph,
                            std::vector<std::string>& out) {
  std::map<int, std::vector<int>> waited_by;
  for (std::size_t r = 0; r < graph.waits_for.size(); ++r) {
    for (int target : graph.waits_for[r]) waited_by[target].push_back(static_cast<int>(r));
  }
  for (auto& [target, waiters] : waited_by) {
    const auto state = snapshot.state(target);
    if (state != RankState::finished && state != RankState::failed) continue;
    std::sort(waiters.begin(), waiters.end());
    waiters.erase(std::unique(waiters.begin(), waiters.end()), waiters.end());
    out.push_back(fmt::format("rank {} {} while {} wait{} for it", target,
                              state == RankState::finished ? "finished (returned)" : "failed",
                              detail::ranks_text(waiters), waiters.size() == 1 ? "s" : ""));
  }
}

// "rank 2 never joined barrier #0 of world (it finished)" for the members missing from a
// collective others are blocked in; those that are where the others are share a line:
// "ranks 256-511 never joined barrier #0 of world (they finished)".
void never_joined(const FabricSnapshot& snapshot, std::vector<std::string>& out) {
  std::set<std::pair<std::uint32_t, std::int64_t>> seen;
  for (int r = 0; r < snapshot.world_size(); ++r) {
    const PendingOp* op = snapshot.blocked_in(r);
    if (op == nullptr || is_point_to_point(op->kind)) continue;
    if (!seen.emplace(op->group->id(), op->coll_seq).second) continue;
    // Where each absent member is, and who is there, in order of the lowest such rank.
    std::vector<std::pair<std::string, std::vector<int>>> by_where;
    for (const int i : snapshot.calls[static_cast<std::size_t>(op->call)].absent) {
      const int g = op->group->global_rank(i);
      const RankState state = snapshot.state(g);
      const PendingOp* blocked = snapshot.waiting_on(g);
      const std::string where = state == RankState::finished ? "finished"
                                : state == RankState::failed ? "failed"
                                : blocked != nullptr ? "blocked in " + describe_pending(*blocked)
                                                     : "running";
      auto it = std::find_if(by_where.begin(), by_where.end(),
                             [&](const auto& w) { return w.first == where; });
      if (it == by_where.end()) it = by_where.insert(by_where.end(), {where, {}});
      it->second.push_back(g);
    }
    for (auto& [where, ranks] : by_where) {
      std::sort(ranks.begin(), ranks.end());
      const bool one = ranks.size() == 1;
      const bool verb = where.starts_with("blocked") || where == "running";
      out.push_back(fmt::format("{} never joined {} #{} of {} ({}{}{})", detail::ranks_text(ranks),
                                to_string(op->kind), op->coll_seq, op->group->name(),
                                one ? "it " : "they ", verb ? (one ? "is " : "are ") : "",
                                where));
    }
  }
}

}  // namespace

std::string deadlock_summary(const FabricSnapshot& snapshot, const detail::WaitGraph& graph) {
  std::size_t blocked = 0;
  for (const RankView& rank : snapshot.ranks) blocked += rank.state == RankState::blocked;
  std::string text = fmt::format("deadlock: {} blocked, none can proceed", plural(blocked, "rank"));
  if (!graph.cycles.empty()) text += "; cycle " + detail::format_cycle(graph.cycles.front());
  return text;
}

void list_blocked(const FabricSnapshot& snapshot, FailureAnalysis& analysis) {
  // Lines by their text (the call and its site, which name everything but the rank).
  std::map<std::string, std::size_t> line_of;
  for (int r = 0; r < snapshot.world_size(); ++r) {
    const PendingOp* op = snapshot.blocked_in(r);
    if (op == nullptr) continue;
    ReportedOperation reported = report_operation(*op);
    const auto [it, added] = line_of.emplace(reported.describe(), analysis.blocked_calls.size());
    if (added && analysis.blocked_calls.size() < kMaxListed) {
      analysis.blocked_calls.push_back({{}, reported});
    }
    if (it->second < analysis.blocked_calls.size()) {
      analysis.blocked_calls[it->second].ranks.push_back(r);
    }
    if (++analysis.blocked_total <= kMaxListed) analysis.blocked.push_back(std::move(reported));
  }
}

std::vector<std::string> culprit_findings(const FabricSnapshot& snapshot,
                                          const detail::WaitGraph& graph) {
  std::vector<std::string> out;
  ended_while_waited_for(snapshot, graph, out);
  never_joined(snapshot, out);
  for (const auto& cycle : graph.cycles) {
    out.push_back(
        fmt::format("cycle {}: each rank waits for the next one", detail::format_cycle(cycle)));
  }
  return out;
}

FailureAnalysis deadlock_analysis(const FabricSnapshot& snapshot, const detail::WaitGraph& graph,
                                  std::string headline) {
  FailureAnalysis out;
  out.deadlock = true;
  out.headline = std::move(headline);
  list_blocked(snapshot, out);
  out.cycles = graph.cycles;
  out.culprits = culprit_findings(snapshot, graph);
  return out;
}

std::vector<int> last_events_of(const FabricSnapshot& snapshot) {
  std::vector<int> out;
  std::size_t ended = 0, failed = 0;
  for (int r = 0; r < snapshot.world_size(); ++r) {
    const auto state = snapshot.state(r);
    const bool listed = state == RankState::blocked    ? out.size() < kMaxListed
                        : state == RankState::finished ? ended++ < 4
                        : state == RankState::failed   ? failed++ < 4
                                                       : false;
    if (listed) out.push_back(r);
  }
  return out;
}

}  // namespace ranklab::diagnosis
