#include "emulator/diagnosis/collective_order.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "traces/rank_list.hpp"
#include "emulator/diagnosis/describe.hpp"

namespace ranklab::diagnosis {
namespace {

// Where a blocked rank is: inside which collective of which group.
struct Whereabouts {
  const Group* group = nullptr;
  std::uint64_t seq = 0;
  std::string call;
};

// A blocked rank is inside a native collective (its pending operation says which) or inside
// a point-to-point one (its fingerprint says which); otherwise, say in a user receive, nothing.
std::optional<Whereabouts> whereabouts_of(const FabricSnapshot& snapshot, int rank) {
  const PendingOp* op = snapshot.blocked_in(rank);
  if (op == nullptr) return std::nullopt;
  if (!is_point_to_point(op->kind)) {
    return Whereabouts{op->group, static_cast<std::uint64_t>(op->coll_seq),
                       describe(op->signature)};
  }
  const auto& inside = snapshot.ranks[static_cast<std::size_t>(rank)].inside;
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

// The mismatch of one cycle whose ranks are inside collectives of two or more groups.
OrderMismatch order_mismatch(const FabricSnapshot& snapshot, const std::vector<int>& cycle,
                             const std::vector<Whereabouts>& where,
                             const std::vector<std::string>& groups) {
  const std::vector<int> ranks(cycle.begin(), cycle.end() - 1);  // the first node repeats
  // Judged against the group of the cycle's lowest rank: the lowest rank elsewhere differs.
  const auto lowest = std::min_element(ranks.begin(), ranks.end()) - ranks.begin();
  const Group* reference = where[static_cast<std::size_t>(lowest)].group;
  int culprit = -1;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (where[i].group != reference && (culprit < 0 || ranks[i] < culprit)) culprit = ranks[i];
  }
  OrderMismatch out;
  out.table = order_table(cycle, where, list_groups(groups), culprit);
  out.summary = fmt::format("collective order mismatch: {} called in opposite orders ({})",
                            list_groups(groups), detail::format_cycle(cycle));
  std::vector<int> blamed{culprit};
  for (const int r : ranks) {
    if (r != culprit) blamed.push_back(r);
  }
  std::string calls;
  for (std::size_t i = 0; i < where.size(); ++i) {
    calls += fmt::format("{}rank {} in {} #{}: {}", i ? ", " : "", ranks[i], where[i].group->name(),
                         where[i].seq, where[i].call);
  }
  std::vector<const PendingOp*> ops;
  for (const int r : blamed) ops.push_back(snapshot.waiting_on(r));
  out.culprit =
      naming({CulpritKind::collective_order,
              fmt::format("ranks call collectives on {} in opposite orders, so each "
                          "waits for the next in another group ({}): {}; first rank "
                          "that differs: {}",
                          list_groups(groups), detail::format_cycle(cycle), calls, culprit),
              std::move(blamed)},
             ops);
  out.culprit.groups = groups;
  return out;
}

}  // namespace

std::optional<OrderMismatch> find_collective_order(const FabricSnapshot& snapshot,
                                                   const detail::WaitGraph& graph) {
  for (const auto& cycle : graph.cycles) {
    std::vector<Whereabouts> where;
    for (auto r = cycle.begin(); r + 1 != cycle.end(); ++r) {
      auto w = whereabouts_of(snapshot, *r);
      if (!w) break;
      where.push_back(std::move(*w));
    }
    if (where.size() + 1 != cycle.size()) continue;  // a rank of the cycle is not in a collective
    std::vector<std::string> groups;
    for (const auto& w : where) {
      if (std::find(groups.begin(), groups.end(), w.group->name()) == groups.end()) {
        groups.push_back(w.group->name());
      }
    }
    if (groups.size() < 2) continue;  // one group: an ordinary deadlock inside a collective
    return order_mismatch(snapshot, cycle, where, groups);
  }
  return std::nullopt;
}

}  // namespace ranklab::diagnosis
