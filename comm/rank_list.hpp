// Lists of ranks as report text: "1, 2 and 3", a wait-for cycle "0 -> 2 -> 0". In comm/
// with the run report (comm/run_report.hpp), which prints its cycles through format_cycle.
#pragma once

#include <cstddef>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace ranklab::detail {

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
