// Cycles of a wait-for graph, and lists of ranks, for deadlock reports.
#pragma once

#include <cstddef>
#include <limits>
#include <string>
#include <string_view>
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

/// How join_ranks writes a list.
struct RankList {
  std::string_view separator = ", ";
  std::string_view last = ", ";  ///< before the last rank: " and " gives "1, 2 and 3"
  /// Past this many ranks the rest are " and N more" (a 65,536-rank run's report stays short).
  std::size_t max_listed = std::numeric_limits<std::size_t>::max();
};

/// `ranks` as text: "1, 2, 3" by default.
std::string join_ranks(const std::vector<int>& ranks, const RankList& style = {});

/// `0 -> 2 -> 0`.
std::string format_cycle(const std::vector<int>& cycle);

}  // namespace ranklab::detail
