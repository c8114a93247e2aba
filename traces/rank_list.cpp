#include "traces/rank_list.hpp"

#include <limits>

namespace ranklab::detail {
namespace {

/// A run of consecutive ranks, ranks[first] to ranks[first + size - 1].
struct Run {
  std::size_t first = 0;
  std::size_t size = 0;
};

/// The list cut into entries: a run of three or more is one range; a shorter run is one
/// entry per rank.
std::vector<Run> entries_of(const std::vector<int>& ranks) {
  std::vector<Run> out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t n = 1;
    while (i + n < ranks.size() && ranks[i + n - 1] < std::numeric_limits<int>::max() &&
           ranks[i + n] == ranks[i + n - 1] + 1) {
      ++n;
    }
    if (n >= 3) {
      out.push_back({i, n});
    } else {
      for (std::size_t k = 0; k < n; ++k) out.push_back({i + k, 1});
    }
    i += n;
  }
  return out;
}

}  // namespace

std::string join_ranks(const std::vector<int>& ranks, const RankList& style) {
  const std::vector<Run> entries = entries_of(ranks);
  std::string out;
  std::size_t shown = 0;  // ranks written so far
  for (std::size_t i = 0; i < entries.size() && i < style.max_listed; ++i) {
    const Run& e = entries[i];
    if (i > 0) out += i + 1 == entries.size() ? style.last : style.separator;
    out += std::to_string(ranks[e.first]);
    if (e.size > 1) out += "-" + std::to_string(ranks[e.first + e.size - 1]);
    shown += e.size;
  }
  if (shown < ranks.size()) out += " and " + std::to_string(ranks.size() - shown) + " more";
  return out;
}

std::string ranks_text(const std::vector<int>& ranks, const RankList& style) {
  return (ranks.size() == 1 ? "rank " : "ranks ") + join_ranks(ranks, style);
}

std::string format_cycle(const std::vector<int>& cycle) {
  std::string out;
  for (std::size_t i = 0; i < cycle.size(); ++i) {
    if (i > 0) out += " -> ";
    out += std::to_string(cycle[i]);
  }
  return out;
}

}  // namespace ranklab::detail
