#include "emulator/diagnosis/detectors.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "traces/rank_list.hpp"
#include "emulator/diagnosis/describe.hpp"

namespace ranklab::diagnosis {
namespace {

/// "1, 2 and 3".
std::string and_list(const std::vector<int>& ranks) {
  return detail::join_ranks(ranks, {.last = " and "});
}

bool tag_matches(int wanted, int tag) {
  return wanted == kAnyTag ? tag < kFirstReservedTag : wanted == tag;
}

/// The receives blocked ranks wait in, by rank.
std::vector<const PendingOp*> blocked_receives(const FabricSnapshot& snapshot) {
  std::vector<const PendingOp*> out;
  for (int r = 0; r < snapshot.world_size(); ++r) {
    const PendingOp* op = snapshot.blocked_in(r);
    if (op != nullptr && op->kind == OpKind::recv) out.push_back(op);
  }
  return out;
}

/// What `send` does to `recv` that keeps them apart, if it misses in one respect only.
std::optional<std::pair<CulpritKind, std::string>> near_miss(const PendingOp& recv,
                                                             const PendingOp& send) {
  const int wanted = recv.peer == kAnySource ? kNoRank : recv.group->global_rank(recv.peer);
  const bool same_group = send.group == recv.group;
  const bool same_source = wanted == kNoRank || send.rank == wanted;
  const bool same_tag = tag_matches(recv.tag, send.tag);
  if (same_group && same_source && !same_tag) {
    return std::pair{CulpritKind::tag_mismatch,
                     fmt::format("rank {} sent it tag {} instead", send.rank, send.tag)};
  }
  if (same_group && same_tag && !same_source) {
    return std::pair{
        CulpritKind::source_mismatch,
        fmt::format("the message with that tag came from rank {}, not rank {}", send.rank, wanted)};
  }
  if (!same_group && same_source && same_tag) {
    return std::pair{CulpritKind::group_mismatch,
                     fmt::format("rank {} sent it in {} instead", send.rank, send.group->name())};
  }
  return std::nullopt;
}

}  // namespace

std::optional<Culprit> find_lost_message(const FabricSnapshot& snapshot) {
  for (const PendingOp* recv : blocked_receives(snapshot)) {
    const Group& g = *recv->group;
    for (const auto& lost : snapshot.dropped) {
      const bool from = recv->peer == kAnySource || g.global_rank(recv->peer) == lost.src;
      if (lost.group != recv->group || lost.dst != recv->rank || !from ||
          !tag_matches(recv->tag, lost.tag)) {
        continue;
      }
      return naming(
          {CulpritKind::lost_message,
           fmt::format("rank {} waits in {}, one message short: fault {} dropped rank "
                       "{}'s send op #{} to it (tag {}, {} x {}) in {}",
                       recv->rank, describe_pending(*recv), lost.fault, lost.src, lost.send_seq,
                       lost.tag, lost.count, to_string(lost.dtype), g.name()),
           {lost.src, recv->rank}},
          {recv});
    }
  }
  return std::nullopt;
}

std::optional<Culprit> find_near_miss(const FabricSnapshot& snapshot) {
  for (const PendingOp* recv : blocked_receives(snapshot)) {
    for (const int i : snapshot.unexpected[static_cast<std::size_t>(recv->rank)]) {
      const PendingOp& send = snapshot.ops[static_cast<std::size_t>(i)];
      if (send.tag >= kFirstReservedTag) continue;  // a collective algorithm's own message
      const auto miss = near_miss(*recv, send);
      if (!miss) continue;
      return naming({miss->first,
                     fmt::format("rank {} waits in {}, but {} ({}op #{}: send to rank {} tag {} "
                                 "in {})",
                                 recv->rank, describe_pending(*recv), miss->second,
                                 send.done ? "buffered, " : "", send.rank_seq, recv->rank, send.tag,
                                 send.group->name()),
                     {send.rank, recv->rank}},
                    {recv, &send});
    }
  }
  return std::nullopt;
}

std::optional<Culprit> find_missing_participant(const FabricSnapshot& snapshot,
                                                const detail::WaitGraph& graph) {
  for (std::size_t r = 0; r < graph.waits_for.size(); ++r) {
    for (const int target : graph.waits_for[r]) {
      if (snapshot.state(target) != RankState::finished) continue;
      std::vector<int> waiters;
      for (std::size_t w = 0; w < graph.waits_for.size(); ++w) {
        const auto& out = graph.waits_for[w];
        if (std::find(out.begin(), out.end(), target) != out.end()) {
          waiters.push_back(static_cast<int>(w));
        }
      }
      const PendingOp& op = *snapshot.waiting_on(static_cast<int>(r));
      return naming({CulpritKind::missing_participant,
                     fmt::format("rank {} returned while rank{} {} wait{} for it (rank {} in {})",
                                 target, waiters.size() == 1 ? "" : "s", and_list(waiters),
                                 waiters.size() == 1 ? "s" : "", r, describe_pending(op)),
                     {target}},
                    {&op});
    }
  }
  return std::nullopt;
}

Culprit classify_cycle(const FabricSnapshot& snapshot, const detail::WaitGraph& graph) {
  if (graph.cycles.empty()) {
    return {
        CulpritKind::deadlock, "every live rank waits for a rank that is blocked elsewhere", {}};
  }
  const std::vector<int>& cycle = graph.cycles.front();
  const std::vector<int> members(cycle.begin(), cycle.end() - 1);
  int sends = 0, recvs = 0, collectives = 0;
  std::string calls;
  std::vector<const PendingOp*> ops;
  for (const int r : members) {
    const PendingOp& op = *snapshot.waiting_on(r);
    ops.push_back(&op);
    sends += op.kind == OpKind::send;
    recvs += op.kind == OpKind::recv;
    collectives += !is_point_to_point(op.kind);
    calls += fmt::format("; rank {} in {}", r, describe_pending(op));
  }
  const auto n = static_cast<int>(members.size());
  const std::string ranks = and_list(members), shown = detail::format_cycle(cycle);
  if (sends == n) {
    return naming({CulpritKind::send_cycle,
                   fmt::format("ranks {} each block in a send to the next before receiving, and "
                               "a rendezvous send completes only when its receive is posted "
                               "(cycle {}){}",
                               ranks, shown, calls),
                   members},
                  ops);
  }
  if (recvs == n) {
    return naming({CulpritKind::recv_cycle,
                   fmt::format("ranks {} each block in a receive from the next before sending "
                               "(cycle {}){}",
                               ranks, shown, calls),
                   members},
                  ops);
  }
  if (collectives > 0) {
    return naming({CulpritKind::collective_vs_p2p,
                   fmt::format("ranks {} disagree on what comes next: some are in a collective "
                               "the others never join, the others in a send or receive (cycle "
                               "{}){}",
                               ranks, shown, calls),
                   members},
                  ops);
  }
  return naming({CulpritKind::p2p_cycle,
                 fmt::format("ranks {} wait for each other in sends and receives (cycle {}){}",
                             ranks, shown, calls),
                 members},
                ops);
}

Culprit diagnose_deadlock(const FabricSnapshot& snapshot, const detail::WaitGraph& graph) {
  if (auto lost = find_lost_message(snapshot)) return std::move(*lost);
  if (auto miss = find_near_miss(snapshot)) return std::move(*miss);
  if (auto missing = find_missing_participant(snapshot, graph)) return std::move(*missing);
  return classify_cycle(snapshot, graph);
}

}  // namespace ranklab::diagnosis
