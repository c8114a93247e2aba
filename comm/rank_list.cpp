#include "comm/rank_list.hpp"

#include <algorithm>

namespace ranklab::detail {

std::string join_ranks(const std::vector<int>& ranks, const RankList& style) {
  const std::size_t listed = std::min(ranks.size(), style.max_listed);
  std::string out;
  for (std::size_t i = 0; i < listed; ++i) {
    if (i > 0) out += i + 1 == ranks.size() ? style.last : style.separator;
    out += std::to_string(ranks[i]);
  }
  if (listed < ranks.size()) out += " and " + std::to_string(ranks.size() - listed) + " more";
  return out;
}

std::string format_cycle(const std::vector<int>& cycle) {
  return join_ranks(cycle, {.separator = " -> ", .last = " -> "});
}

}  // namespace ranklab::detail
