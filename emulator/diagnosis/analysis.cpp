#include "emulator/diagnosis/analysis.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "comm/rank_list.hpp"
#include "emulator/diagnosis/describe.hpp"

namespace ranklab::diagnosis {
namespace {

std::string join_ranks(const std::vector<int>& ranks) {
  return detail::join_ranks(ranks, {.max_listed = kMaxListed});
}

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
    out.push_back(fmt::format("rank {} {} while rank{} {} wait{} for it", target,
                              state == RankState::finished ? "finished (returned)" : "failed",
                              waiters.size() == 1 ? "" : "s", join_ranks(waiters),
                              waiters.size() == 1 ? "s" : ""));
  }
}

// "rank 2 never joined barrier #0 of world (it finished)", for each member missing from a
// collective others are blocked in.
void never_joined(const FabricSnapshot& snapshot, std::vector<std::string>& out) {
  std::set<std::pair<std::uint32_t, std::int64_t>> seen;
  for (int r = 0; r < snapshot.world_size(); ++r) {
    const PendingOp* op = snapshot.blocked_in(r);
    if (op == nullptr || is_point_to_point(op->kind)) continue;
    if (!seen.emplace(op->group->id(), op->coll_seq).second) continue;
    for (const int i : snapshot.calls[static_cast<std::size_t>(op->call)].absent) {
      const int g = op->group->global_rank(i);
      const RankState state = snapshot.state(g);
      const PendingOp* blocked = snapshot.waiting_on(g);
      const std::string where = state == RankState::finished ? "it finished"
                                : state == RankState::failed ? "it failed"
                                : blocked != nullptr
                                    ? "it is blocked in " + describe_pending(*blocked)
                                    : "it is running";
      out.push_back(fmt::format("rank {} never joined {} #{} of {} ({})", g, to_string(op->kind),
                                op->coll_seq, op->group->name(), where));
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
  for (int r = 0; r < snapshot.world_size(); ++r) {
    const PendingOp* op = snapshot.blocked_in(r);
    if (op == nullptr) continue;
    if (++analysis.blocked_total <= kMaxListed) analysis.blocked.push_back(report_operation(*op));
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
