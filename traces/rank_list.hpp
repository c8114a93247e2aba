// Lists of ranks as report text: "0-3, 5 and 7-9", a wait-for cycle "0 -> 2 -> 0". In traces/,
// the lowest module, so that the run report (comm/run_report.hpp) and the readers' own
// reports (NCCL RAS snapshots) share it. Every report that lists ranks goes through join_ranks, so that a 512-rank run reads
// "ranks 0-510" on every backend and in every section (`--json` keeps the full lists).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ranklab::detail {

/// How join_ranks writes a list.
struct RankList {
  std::string_view separator = ", ";
  std::string_view last = ", ";  ///< before the last entry: " and " gives "1, 2 and 5-9"
  /// Past this many entries (a range is one) the rest are " and N more" ranks, so that a
  /// 65,536-rank run's line stays a line even where its ranks make no ranges.
  std::size_t max_listed = 32;
};

/// `ranks` as text, in their order, each run of three or more consecutive ranks as a range:
/// "0-3, 5, 7-9" by default ("0, 1" stays a pair).
std::string join_ranks(const std::vector<int>& ranks, const RankList& style = {});

/// "rank 3" or "ranks 0-3, 5": the noun in the number the list needs, then join_ranks.
std::string ranks_text(const std::vector<int>& ranks, const RankList& style = {});

/// `0 -> 2 -> 0`: every rank in the cycle's order, never a range.
std::string format_cycle(const std::vector<int>& cycle);

}  // namespace ranklab::detail
