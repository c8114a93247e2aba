#include "comm/group.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "comm/errors.hpp"

namespace ranklab {

Group::Group(std::uint32_t id, std::string name, std::vector<int> ranks)
    : id_(id), name_(std::move(name)), ranks_(std::move(ranks)) {
  const auto [lo, hi] = std::minmax_element(ranks_.begin(), ranks_.end());
  min_rank_ = *lo;
  group_rank_of_.assign(static_cast<std::size_t>(*hi - *lo + 1), -1);
  for (std::size_t i = 0; i < ranks_.size(); ++i) {
    group_rank_of_[static_cast<std::size_t>(ranks_[i] - min_rank_)] = static_cast<int>(i);
  }
}

void Group::check_members(std::string_view kind, std::span<const int> ranks, int world_size) {
  RANKLAB_CHECK(!kind.empty(), "new_group: the group kind must not be empty");
  RANKLAB_CHECK(!ranks.empty(), "new_group {}: a group needs at least one rank", kind);
  for (int r : ranks) {
    RANKLAB_CHECK(r >= 0 && r < world_size, "new_group {}: rank {} is outside the world of {}",
                  kind, r, world_size);
  }
  std::vector<int> sorted(ranks.begin(), ranks.end());
  std::sort(sorted.begin(), sorted.end());
  const auto twice = std::adjacent_find(sorted.begin(), sorted.end());
  RANKLAB_CHECK(twice == sorted.end(), "new_group {}: rank {} is listed twice", kind, *twice);
}

std::string Group::make_name(std::string_view kind, std::span<const int> ranks) {
  return fmt::format("{}[{}]", kind, fmt::join(ranks, ","));
}

}  // namespace ranklab
