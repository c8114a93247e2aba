// Tarjan's strongly connected components (iterative), then a breadth-first search inside
// each component for the shortest cycle through its smallest node.
#include "emulator/detail/wait_graph.hpp"

#include <algorithm>
#include <deque>
#include <utility>

namespace ranklab::detail {
namespace {

// Component id of every node (-1 for none), computed without recursion.
std::vector<int> strongly_connected(const std::vector<std::vector<int>>& g) {
  const int n = static_cast<int>(g.size());
  std::vector<int> index(g.size(), -1), low(g.size(), 0), comp(g.size(), -1);
  std::vector<bool> on_stack(g.size(), false);
  std::vector<int> stack;
  std::vector<std::pair<int, std::size_t>> frames;  // (node, next edge)
  int next_index = 0, next_comp = 0;
  for (int root = 0; root < n; ++root) {
    if (index[root] >= 0 || g[root].empty()) continue;
    frames.emplace_back(root, 0);
    while (!frames.empty()) {
      auto& [v, edge] = frames.back();
      if (edge == 0 && index[v] < 0) {
        index[v] = low[v] = next_index++;
        stack.push_back(v);
        on_stack[v] = true;
      }
      if (edge < g[v].size()) {
        const int w = g[v][edge++];
        if (index[w] < 0) {
          frames.emplace_back(w, 0);
        } else if (on_stack[w]) {
          low[v] = std::min(low[v], index[w]);
        }
        continue;
      }
      if (low[v] == index[v]) {
        int w;
        do {
          w = stack.back();
          stack.pop_back();
          on_stack[w] = false;
          comp[w] = next_comp;
        } while (w != v);
        ++next_comp;
      }
      const int done = v;
      frames.pop_back();
      if (!frames.empty()) low[frames.back().first] = std::min(low[frames.back().first], low[done]);
    }
  }
  return comp;
}

// Shortest path start -> ... -> start staying inside component `c`.
std::vector<int> shortest_cycle(const std::vector<std::vector<int>>& g,
                                const std::vector<int>& comp, int start) {
  std::vector<int> parent(g.size(), -2);
  std::deque<int> queue{start};
  parent[start] = -1;
  while (!queue.empty()) {
    const int v = queue.front();
    queue.pop_front();
    for (int w : g[v]) {
      if (comp[w] != comp[start]) continue;
      if (w == start) {
        std::vector<int> cycle;
        for (int u = v; u != -1; u = parent[u]) cycle.push_back(u);
        std::reverse(cycle.begin(), cycle.end());  // start, ..., v
        cycle.push_back(start);
        return cycle;
      }
      if (parent[w] == -2) {
        parent[w] = v;
        queue.push_back(w);
      }
    }
  }
  return {};
}

}  // namespace

std::vector<std::vector<int>> find_cycles(const std::vector<std::vector<int>>& waits_for,
                                          std::size_t limit) {
  const std::vector<int> comp = strongly_connected(waits_for);
  std::vector<std::vector<int>> cycles;
  std::vector<bool> comp_done(waits_for.size(), false);
  for (std::size_t v = 0; v < waits_for.size() && cycles.size() < limit; ++v) {
    if (comp[v] < 0 || comp_done[static_cast<std::size_t>(comp[v])]) continue;
    comp_done[static_cast<std::size_t>(comp[v])] = true;
    auto cycle = shortest_cycle(waits_for, comp, static_cast<int>(v));
    if (!cycle.empty()) cycles.push_back(std::move(cycle));
  }
  return cycles;
}

}  // namespace ranklab::detail
