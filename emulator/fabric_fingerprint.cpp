// Fingerprints of the communicator's point-to-point collectives, and the collective-order check.
//
// Every collective the communicator runs, whatever its algorithm, posts a fingerprint
// (op, reduce op, dtype, count, root, algorithm) into the group's next call slot: a native
// call as it joins (fabric_collectives.cpp), a point-to-point one (ring, tree, ...) here,
// before its first message. Posting never blocks: it compares the fingerprint with the
// first member's and throws MismatchError with a side-by-side table at the first
// disagreement. A point-to-point algorithm would otherwise exchange messages of the wrong
// sizes, or wait forever; and members that disagree on the algorithm are caught too.
//
// Two ranks that call collectives on two groups in opposite orders cannot be caught when
// they post: each blocks in its first call and never posts its second, and non-blocking
// collectives in opposite orders are legal (MPI-3) when the program waits for them later.
// So the check runs when the run would otherwise be declared deadlocked: a wait-for cycle
// whose ranks are all inside collectives of more than one group is an ordering mismatch,
// reported as one (exit 4) rather than as a plain deadlock.
#include <algorithm>
#include <optional>

#include "emulator/detail/wait_graph.hpp"
#include "comm/errors.hpp"
#include "emulator/fabric.hpp"
#include "emulator/rank.hpp"

namespace ranklab {

std::uint64_t Fabric::begin_collective(int rank, const Group& group,
                                       const CollectiveFingerprint& fingerprint) {
  const int me = group.group_rank(rank);
  RANKLAB_CHECK(me >= 0, "rank {}: {} on group {}, which it is not a member of", rank,
                to_string(fingerprint.signature.op), group.name());
  Lock lock(mutex_);
  throw_if_aborted(rank);
  const auto r = static_cast<std::size_t>(rank);
  const detail::PostedCall call{fingerprint.signature,
                                fingerprints_.algorithm_id(fingerprint.algorithm),
                                fingerprint.per_peer_counts, ranks_[r]->next_seq,
                                ranks_[r]->site};
  const std::uint64_t seq = post_call(rank, group, call, nullptr);
  auto& inside = fingerprints_.inside;
  if (inside.size() < ranks_.size()) inside.resize(ranks_.size());
  inside[r] = detail::InsideCollective{&group, seq, fingerprint};
  return seq;
}

void Fabric::end_collective(int rank) noexcept {
  try {
    Lock lock(mutex_);
    auto& inside = fingerprints_.inside;
    if (static_cast<std::size_t>(rank) < inside.size())
      inside[static_cast<std::size_t>(rank)].reset();
  } catch (...) {  // only a fiber-mutex misuse can throw; nothing to undo then
  }
}

namespace {

// Where a blocked rank is: inside which collective of which group.
struct Whereabouts {
  const Group* group = nullptr;
  std::uint64_t seq = 0;
  std::string call;
};

// A blocked rank is inside a native collective (its pending operation says which) or inside
// a point-to-point one (its fingerprint says which); otherwise, say in a user receive, nothing.
std::optional<Whereabouts> whereabouts_of(const detail::RankSlot& slot,
                                          const std::optional<detail::InsideCollective>& inside) {
  const detail::Operation* op = slot.waiting_on;
  if (slot.state != detail::RankState::blocked || op == nullptr) return std::nullopt;
  if (!is_point_to_point(op->kind)) {
    return Whereabouts{op->group, static_cast<std::uint64_t>(op->coll_seq),
                       describe(op->signature) + " via direct"};
  }
  if (!inside || inside->group != op->group) return std::nullopt;
  return Whereabouts{inside->group, inside->seq, describe(inside->fingerprint)};
}

std::string list_groups(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    out += i == 0 ? "" : i + 1 == names.size() ? " and " : ", ";
    out += names[i];
  }
  return out;
}

// The table of a cycle (ranks[i] waits for cycle[i + 1]); `culprit` is marked.
std::string order_table(const std::vector<int>& cycle, const std::vector<Whereabouts>& where,
                        const std::string& groups, int culprit) {
  std::string table = fmt::format(
      "collective order mismatch: ranks call collectives on {} in opposite orders, so each "
      "waits for a rank that is inside a collective of another group\n"
      "  {:>4}  {:>9}  {}\n",
      groups, "rank", "waits for", "inside");
  for (std::size_t i = 0; i < where.size(); ++i) {
    table += fmt::format("  {:>4}  {:>9}  {} #{}: {}{}\n", cycle[i], cycle[i + 1],
                         where[i].group->name(), where[i].seq, where[i].call,
                         cycle[i] == culprit ? "   <-- differs" : "");
  }
  return table + fmt::format("first rank that differs: {}", culprit);
}

}  // namespace

bool Fabric::declare_order_mismatch(const detail::WaitGraph& graph) {
  const auto& inside = fingerprints_.inside;
  for (const auto& cycle : graph.cycles) {
    const std::vector<int> ranks(cycle.begin(), cycle.end() - 1);  // the first node repeats
    std::vector<Whereabouts> where;
    for (int r : ranks) {
      const auto i = static_cast<std::size_t>(r);
      auto w = whereabouts_of(*ranks_[i], i < inside.size() ? inside[i] : std::nullopt);
      if (!w) break;
      where.push_back(std::move(*w));
    }
    if (where.size() != ranks.size()) continue;  // a rank of the cycle is not in a collective
    std::vector<std::string> groups;
    for (const auto& w : where) {
      if (std::find(groups.begin(), groups.end(), w.group->name()) == groups.end()) {
        groups.push_back(w.group->name());
      }
    }
    if (groups.size() < 2) continue;  // one group: an ordinary deadlock inside a collective

    // Judged against the group of the cycle's lowest rank: the lowest rank elsewhere differs.
    const auto lowest = std::min_element(ranks.begin(), ranks.end()) - ranks.begin();
    const Group* reference = where[static_cast<std::size_t>(lowest)].group;
    int culprit = -1;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      if (where[i].group != reference && (culprit < 0 || ranks[i] < culprit)) culprit = ranks[i];
    }
    std::string table = order_table(cycle, where, list_groups(groups), culprit);
    std::string summary =
        fmt::format("collective order mismatch: {} called in opposite orders ({})",
                    list_groups(groups), detail::format_cycle(cycle));
    std::vector<int> blamed{culprit};
    for (const int r : ranks) {
      if (r != culprit) blamed.push_back(r);
    }
    std::string calls;
    for (std::size_t i = 0; i < where.size(); ++i) {
      calls += fmt::format("{}rank {} in {} #{}: {}", i ? ", " : "", ranks[i],
                           where[i].group->name(), where[i].seq, where[i].call);
    }
    std::vector<const detail::Operation*> ops;
    for (const int r : blamed) ops.push_back(ranks_[static_cast<std::size_t>(r)]->waiting_on);
    culprit_ = naming({CulpritKind::collective_order,
                       fmt::format("ranks call collectives on {} in opposite orders, so each "
                                   "waits for the next in another group ({}): {}; first rank "
                                   "that differs: {}",
                                   list_groups(groups), detail::format_cycle(cycle), calls,
                                   culprit),
                       std::move(blamed)},
                      ops);
    culprit_.groups = groups;
    FailureAnalysis analysis = deadlock_analysis(graph, /*watchdog_rank=*/-1);
    analysis.preamble = table;
    abort(RunStatus::mismatch, culprit, std::make_exception_ptr(MismatchError(table)),
          std::move(summary), std::move(analysis));
    return true;
  }
  return false;
}

// RankContext's entry points for fingerprints, kept beside the fabric's.
std::uint64_t RankContext::begin_collective(const Group& group,
                                            const CollectiveFingerprint& fingerprint) {
  return fabric_.begin_collective(rank_, group, fingerprint);
}

void RankContext::end_collective() noexcept { fabric_.end_collective(rank_); }

}  // namespace ranklab
