// Cycles of a wait-for graph, for deadlock reports (traces/rank_list.hpp prints them).
#pragma once

#include <cstddef>
#include <vector>

namespace ranklab::detail {

/// Who waits for whom, among blocked ranks.
struct WaitGraph {
  std::vector<std::vector<int>> waits_for;  ///< by global rank
  std::vector<std::vector<int>> cycles;     ///< elementary cycles found, first node repeated
};

/// One shortest cycle through the smallest rank of each strongly connected component
/// (self-waits included), at most `limit` of them, ordered by that rank. Each cycle
/// repeats its first node at the end: {0, 2, 0}. Iterative: safe on a fiber's stack.
std::vector<std::vector<int>> find_cycles(const std::vector<std::vector<int>>& waits_for,
                                          std::size_t limit);

}  // namespace ranklab::detail
