#include "emulator/diagnosis/wait_for.hpp"

#include <fmt/format.h>

#include <set>
#include <utility>

#include "emulator/diagnosis/describe.hpp"

namespace ranklab::diagnosis {

detail::WaitGraph build_wait_graph(const FabricSnapshot& snapshot) {
  detail::WaitGraph graph;
  graph.waits_for.resize(snapshot.ranks.size());
  for (int r = 0; r < snapshot.world_size(); ++r) {
    const PendingOp* op = snapshot.blocked_in(r);
    if (op == nullptr) continue;
    const Group& g = *op->group;
    auto& out = graph.waits_for[static_cast<std::size_t>(r)];
    if (op->kind == OpKind::send) {
      out.push_back(g.global_rank(op->peer));
    } else if (op->kind == OpKind::recv) {
      if (op->peer != kAnySource) {
        out.push_back(g.global_rank(op->peer));
      } else {
        for (int m : g.ranks()) {
          if (m != op->rank) out.push_back(m);
        }
      }
    } else {
      for (const int i : snapshot.calls[static_cast<std::size_t>(op->call)].absent) {
        out.push_back(g.global_rank(i));
      }
    }
  }
  graph.cycles = detail::find_cycles(graph.waits_for, kMaxListed);
  return graph;
}

namespace {

const char* state_name(RankState state) {
  switch (state) {
    case RankState::blocked:
      return "blocked";
    case RankState::finished:
      return "finished";
    case RankState::failed:
      return "failed";
    case RankState::running:
      break;
  }
  return "running";
}

// "send tag 3", "recv tag any", "all_reduce #0 world": what an edge from a rank says.
std::string edge_label(const PendingOp& op) {
  if (!is_point_to_point(op.kind)) {
    return fmt::format("{} #{} {}", to_string(op.kind), op.coll_seq, op.group->name());
  }
  return fmt::format("{} tag {}", to_string(op.kind),
                     op.tag == kAnyTag ? std::string("any") : std::to_string(op.tag));
}

}  // namespace

WaitForGraph draw_wait_graph(const FabricSnapshot& snapshot, const detail::WaitGraph& graph) {
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
    WaitForGraph::Node node{.rank = r, .state = state_name(snapshot.state(r))};
    const PendingOp* op = snapshot.blocked_in(r);
    if (op != nullptr) node.call = describe_pending(*op);
    out.nodes.push_back(std::move(node));
    if (op == nullptr) continue;
    const std::string label = edge_label(*op);
    for (const int t : graph.waits_for[static_cast<std::size_t>(r)]) {
      if (!involved.contains(t)) continue;
      out.edges.push_back({r, t, label, cycle_edges.contains({r, t})});
    }
  }
  for (const auto& lost : snapshot.dropped) {
    if (!involved.contains(lost.src) || !involved.contains(lost.dst)) continue;
    out.edges.push_back(
        {lost.src, lost.dst,
         fmt::format("lost: op #{} tag {} ({})", lost.send_seq, lost.tag, lost.fault), false,
         true});
  }
  return out;
}

}  // namespace ranklab::diagnosis
