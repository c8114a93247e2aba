#include "emulator/group.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

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

int Group::group_rank(int global) const {
  const int index = global - min_rank_;
  if (index < 0 || index >= static_cast<int>(group_rank_of_.size())) return -1;
  return group_rank_of_[static_cast<std::size_t>(index)];
}

std::string Group::make_name(std::string_view kind, std::span<const int> ranks) {
  return fmt::format("{}[{}]", kind, fmt::join(ranks, ","));
}

}  // namespace ranklab
