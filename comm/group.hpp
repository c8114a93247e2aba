// A communication group: an ordered set of global ranks with a readable name. In comm/: both
// backends name and check their groups with it (the emulator's fabric owns them).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ranklab {

/// Immutable once created; owned by the cluster's fabric, so references stay valid for
/// the whole run. Group rank i is global rank ranks()[i].
class Group {
 public:
  Group(std::uint32_t id, std::string name, std::vector<int> ranks);

  /// `world`, or KIND[r0,r1,...] (`tp[0,1]`).
  const std::string& name() const { return name_; }
  /// Dense index of the group within its cluster (trace header order of creation).
  std::uint32_t id() const { return id_; }
  int size() const { return static_cast<int>(ranks_.size()); }
  std::span<const int> ranks() const { return ranks_; }

  /// Global rank of group rank `group_rank`.
  int global_rank(int group_rank) const { return ranks_[static_cast<std::size_t>(group_rank)]; }
  /// Group rank of global rank `global`, or -1 if it is not a member. Inline: every fabric
  /// call asks it.
  int group_rank(int global) const {
    const int index = global - min_rank_;
    if (index < 0 || index >= static_cast<int>(group_rank_of_.size())) return -1;
    return group_rank_of_[static_cast<std::size_t>(index)];
  }
  bool contains(int global) const { return group_rank(global) >= 0; }

  /// The canonical name of a group of `kind` over `ranks`: `tp[0,1]`.
  static std::string make_name(std::string_view kind, std::span<const int> ranks);
  /// Throws UsageError unless `ranks` can make a group of `kind` in a world of `world_size`:
  /// a kind, at least one rank, every rank in the world, none twice (new_group's checks, on
  /// every backend).
  static void check_members(std::string_view kind, std::span<const int> ranks, int world_size);

 private:
  std::uint32_t id_;
  std::string name_;
  std::vector<int> ranks_;
  std::vector<int> group_rank_of_;  // indexed by global rank - min_rank_, -1 if absent
  int min_rank_ = 0;
};

}  // namespace ranklab
