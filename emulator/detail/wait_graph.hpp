// Cycles of a wait-for graph, for deadlock reports.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace ranklab::detail {

/// One shortest cycle through the smallest rank of each strongly connected component
/// (self-waits included), at most `limit` of them, ordered by that rank. Each cycle
/// repeats its first node at the end: {0, 2, 0}. Iterative: safe on a fiber's stack.
std::vector<std::vector<int>> find_cycles(const std::vector<std::vector<int>>& waits_for,
                                          std::size_t limit);

/// `0 -> 2 -> 0`.
std::string format_cycle(const std::vector<int>& cycle);

}  // namespace ranklab::detail
