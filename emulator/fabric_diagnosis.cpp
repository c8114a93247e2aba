// The one-line diagnosis of a deadlock (RunReport::culprit) and the wait-for graph that
// `--wait-graph` draws. The kinds, most specific first:
//   lost-message         a blocked receive waits for a message that a drop fault removed
//   tag-mismatch         a blocked receive has an unmatched message from its source with
//                        another tag
//   source-mismatch      ... a message with its tag from another source
//   group-mismatch       ... a message from its source with its tag, in another group
//   missing-participant  ranks wait for a rank that has returned
//   send-cycle           a wait-for cycle of blocking sends (each sends before it receives)
//   recv-cycle           a cycle of blocking receives (each receives before it sends)
//   collective-vs-p2p    a cycle in which some ranks are in a collective and others in a
//                        send or receive: they disagree on what comes next
//   p2p-cycle            a cycle of sends and receives
//   deadlock             none of the above (ranks wait for ranks blocked elsewhere)
// A cycle through collectives of two groups is reported as a collective-order mismatch
// before any of this runs (fabric_fingerprint.cpp).
#include <algorithm>
#include <set>

#include "emulator/detail/wait_graph.hpp"
#include "comm/errors.hpp"
#include "emulator/fabric.hpp"

namespace ranklab {

using detail::Operation;

namespace {

/// "1, 2 and 3".
std::string and_list(const std::vector<int>& ranks) {
  return detail::join_ranks(ranks, {.last = " and "});
}

bool tag_matches(int wanted, int tag) {
  return wanted == kAnyTag ? tag < kFirstReservedTag : wanted == tag;
}

}  // namespace

Culprit Fabric::diagnose_deadlock(const detail::WaitGraph& graph) const {
  std::vector<const Operation*> receives;  // blocked receives, by rank
  for (const auto& slot : ranks_) {
    const Operation* op = slot->state == RankState::blocked ? slot->waiting_on : nullptr;
    if (op != nullptr && op->kind == OpKind::recv) receives.push_back(op);
  }

  // A message a drop fault removed, that a blocked receive waits for.
  if (faults_) {
    for (const Operation* recv : receives) {
      const Group& g = *recv->group;
      for (const auto& lost : faults_->dropped()) {
        const bool from = recv->peer == kAnySource || g.global_rank(recv->peer) == lost.src;
        if (lost.group != recv->group || lost.dst != recv->rank || !from ||
            !tag_matches(recv->tag, lost.tag)) {
          continue;
        }
        return naming({CulpritKind::lost_message,
                fmt::format("rank {} waits in {}, one message short: fault {} dropped rank {}'s "
                            "send op #{} to it (tag {}, {} x {}) in {}",
                            recv->rank, describe_pending(*recv), lost.fault, lost.src,
                            lost.send_seq, lost.tag, lost.count, to_string(lost.dtype),
                            g.name()),
                       {lost.src, recv->rank}},
                      {recv});
      }
    }
  }

  // An unmatched message addressed to a blocked receiver that almost matches.
  for (const Operation* recv : receives) {
    const Group& g = *recv->group;
    const int wanted = recv->peer == kAnySource ? kNoRank : g.global_rank(recv->peer);
    for (const auto& send : mailboxes_[static_cast<std::size_t>(recv->rank)].unexpected) {
      if (send->tag >= kFirstReservedTag) continue;  // a collective algorithm's own message
      const bool same_group = send->group == recv->group;
      const bool same_source = wanted == kNoRank || send->rank == wanted;
      const bool same_tag = tag_matches(recv->tag, send->tag);
      CulpritKind kind = CulpritKind::none;
      std::string why;
      if (same_group && same_source && !same_tag) {
        kind = CulpritKind::tag_mismatch;
        why = fmt::format("rank {} sent it tag {} instead", send->rank, send->tag);
      } else if (same_group && same_tag && !same_source) {
        kind = CulpritKind::source_mismatch;
        why = fmt::format("the message with that tag came from rank {}, not rank {}", send->rank,
                          wanted);
      } else if (!same_group && same_source && same_tag) {
        kind = CulpritKind::group_mismatch;
        why = fmt::format("rank {} sent it in {} instead", send->rank, send->group->name());
      } else {
        continue;
      }
      return naming({kind,
              fmt::format("rank {} waits in {}, but {} ({}op #{}: send to rank {} tag {} in {})",
                          recv->rank, describe_pending(*recv), why,
                          send->done ? "buffered, " : "", send->rank_seq, recv->rank, send->tag,
                          send->group->name()),
                     {send->rank, recv->rank}},
                    {recv, send.get()});
    }
  }

  // Ranks that returned while others wait for them.
  for (std::size_t r = 0; r < graph.waits_for.size(); ++r) {
    for (const int target : graph.waits_for[r]) {
      if (ranks_[static_cast<std::size_t>(target)]->state != RankState::finished) continue;
      std::vector<int> waiters;
      for (std::size_t w = 0; w < graph.waits_for.size(); ++w) {
        const auto& out = graph.waits_for[w];
        if (std::find(out.begin(), out.end(), target) != out.end()) {
          waiters.push_back(static_cast<int>(w));
        }
      }
      const Operation& op = *ranks_[r]->waiting_on;
      return naming({CulpritKind::missing_participant,
              fmt::format("rank {} returned while rank{} {} wait{} for it (rank {} in {})", target,
                          waiters.size() == 1 ? "" : "s", and_list(waiters),
                          waiters.size() == 1 ? "s" : "", r, describe_pending(op)),
                     {target}},
                    {&op});
    }
  }

  if (graph.cycles.empty()) {
    return {CulpritKind::deadlock, "every live rank waits for a rank that is blocked elsewhere", {}};
  }
  const std::vector<int>& cycle = graph.cycles.front();
  const std::vector<int> members(cycle.begin(), cycle.end() - 1);
  int sends = 0, recvs = 0, collectives = 0;
  std::string calls;
  std::vector<const Operation*> ops;
  for (const int r : members) {
    const Operation& op = *ranks_[static_cast<std::size_t>(r)]->waiting_on;
    ops.push_back(&op);
    sends += op.kind == OpKind::send;
    recvs += op.kind == OpKind::recv;
    collectives += !is_point_to_point(op.kind);
    calls += fmt::format("; rank {} in {}", r, describe_pending(op));
  }
  const auto n = static_cast<int>(members.size());
  if (sends == n) {
    return naming({CulpritKind::send_cycle,
            fmt::format("ranks {} each block in a send to the next before receiving, and a "
                        "rendezvous send completes only when its receive is posted (cycle {}){}",
                        and_list(members), detail::format_cycle(cycle), calls),
            members},
                  ops);
  }
  if (recvs == n) {
    return naming({CulpritKind::recv_cycle,
            fmt::format("ranks {} each block in a receive from the next before sending (cycle "
                        "{}){}",
                        and_list(members), detail::format_cycle(cycle), calls),
            members},
                  ops);
  }
  if (collectives > 0) {
    return naming({CulpritKind::collective_vs_p2p,
            fmt::format("ranks {} disagree on what comes next: some are in a collective the "
                        "others never join, the others in a send or receive (cycle {}){}",
                        and_list(members), detail::format_cycle(cycle), calls),
            members},
                  ops);
  }
  return naming({CulpritKind::p2p_cycle,
          fmt::format("ranks {} wait for each other in sends and receives (cycle {}){}",
                      and_list(members), detail::format_cycle(cycle), calls),
          members},
                ops);
}

WaitForGraph Fabric::snapshot_wait_graph(const detail::WaitGraph& graph) const {
  constexpr std::size_t kMaxNodes = 256;  // a picture of 65,536 ranks helps no one
  WaitForGraph out;
  std::set<int> involved;
  for (std::size_t r = 0; r < graph.waits_for.size() && involved.size() < kMaxNodes; ++r) {
    if (graph.waits_for[r].empty()) continue;
    involved.insert(static_cast<int>(r));
    for (const int t : graph.waits_for[r]) involved.insert(t);
  }
  std::set<std::pair<int, int>> cycle_edges;
  for (const auto& cycle : graph.cycles) {
    for (std::size_t i = 0; i + 1 < cycle.size(); ++i) cycle_edges.emplace(cycle[i], cycle[i + 1]);
  }
  for (const int r : involved) {
    const auto& slot = *ranks_[static_cast<std::size_t>(r)];
    WaitForGraph::Node node{.rank = r};
    switch (slot.state) {
      case RankState::blocked: node.state = "blocked"; break;
      case RankState::finished: node.state = "finished"; break;
      case RankState::failed: node.state = "failed"; break;
      case RankState::running: node.state = "running"; break;
    }
    const Operation* op = slot.state == RankState::blocked ? slot.waiting_on : nullptr;
    if (op != nullptr) node.call = describe_pending(*op);
    out.nodes.push_back(std::move(node));
    if (op == nullptr) continue;
    const std::string label =
        is_point_to_point(op->kind)
            ? fmt::format("{} tag {}", to_string(op->kind),
                          op->tag == kAnyTag ? std::string("any") : std::to_string(op->tag))
            : fmt::format("{} #{} {}", to_string(op->kind), op->coll_seq, op->group->name());
    for (const int t : graph.waits_for[static_cast<std::size_t>(r)]) {
      if (!involved.contains(t)) continue;
      out.edges.push_back({r, t, label, cycle_edges.contains({r, t})});
    }
  }
  if (faults_) {
    for (const auto& lost : faults_->dropped()) {
      if (!involved.contains(lost.src) || !involved.contains(lost.dst)) continue;
      out.edges.push_back({lost.src, lost.dst,
                           fmt::format("lost: op #{} tag {} ({})", lost.send_seq, lost.tag,
                                       lost.fault),
                           false, true});
    }
  }
  return out;
}

}  // namespace ranklab
