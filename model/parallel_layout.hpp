// The TP x PP x DP decomposition of a world (DESIGN.md §4, shared/seeds/000 §4.1 and 002):
// which (d, p, t) each rank is, which ranks share a tensor-, pipeline- or data-parallel
// group, and the groups themselves as Communicators.
//
// ParallelConfig is pure arithmetic (no communication), so the CLI can print a layout and
// validate a configuration before any rank starts. ParallelLayout builds the groups, the way
// Megatron's initialize_model_parallel does: every rank creates every group, in one fixed
// order, and keeps its own. In the emulator group ids are handed out on first creation, so
// one fixed order on every rank gives the same ids (and the same trace) under any schedule.
//
//   TP group: fixed (d, p), t varies     e.g. tp[0,1]
//   PP group: fixed (d, t), p varies     e.g. pp[0,2]
//   DP group: fixed (p, t), d varies     e.g. dp[0,4]
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/communicator.hpp"
#include "model/shape.hpp"

namespace ranklab {

/// How global ranks are numbered from the coordinates (d, p, t), fastest axis first.
enum class RankOrder {
  tp_pp_dp,  ///< rank = d·(PP·TP) + p·TP + t: the seed's order (the default)
  tp_dp_pp,  ///< rank = p·(DP·TP) + d·TP + t: Megatron-LM's order
};

/// "tp-pp-dp" or "tp-dp-pp".
std::string_view to_string(RankOrder order);
/// Parses "tp-pp-dp" / "tp-dp-pp" (or with underscores); throws UsageError naming both.
RankOrder parse_rank_order(std::string_view text);

/// The three parallel axes, in the order groups are created and printed.
enum class GroupKind { tp, pp, dp };
inline constexpr std::array<GroupKind, 3> kGroupKinds = {GroupKind::tp, GroupKind::pp,
                                                         GroupKind::dp};
/// "tp", "pp", "dp": the group-name prefix.
std::string_view to_string(GroupKind kind);

/// A rank's coordinates: DP replica d, PP stage p, TP shard t.
struct Coords {
  int d = 0;
  int p = 0;
  int t = 0;
  friend bool operator==(const Coords&, const Coords&) = default;
};

/// "tp[0,1]": the name the communicator gives a group of `kind` over `ranks`.
std::string group_name(GroupKind kind, const std::vector<int>& ranks);

/// TP·PP·DP degrees and the rank numbering. Pure arithmetic.
struct ParallelConfig {
  int tp = 1;
  int pp = 1;
  int dp = 1;
  RankOrder order = RankOrder::tp_pp_dp;

  /// TP·PP·DP (after validate(), which bounds each degree).
  int world_size() const { return tp * pp * dp; }

  /// Throws UsageError for a degree that is zero, negative or absurdly large.
  void validate() const;
  /// validate(), and that the model splits: L divisible by PP, I divisible by TP.
  void validate(const ModelShape& shape) const;

  /// The degree of `kind`'s axis.
  int size(GroupKind kind) const;
  /// The coordinate of `kind` in `coords` (t, p or d).
  static int index(GroupKind kind, const Coords& coords);

  /// Global rank of `coords`; throws UsageError if a coordinate is out of range.
  int rank_of(const Coords& coords) const;
  /// Coordinates of global rank `rank`; throws UsageError if it is outside the world.
  Coords coords_of(int rank) const;

  /// Global ranks of the `kind` group containing `rank`, in group-rank order (so the group
  /// rank of a member is its coordinate along `kind`).
  std::vector<int> group_ranks(GroupKind kind, int rank) const;
  /// Every group of `kind`, ordered by their first member.
  std::vector<std::vector<int>> all_groups(GroupKind kind) const;

  /// "TP2 PP2 DP2 (tp-pp-dp)".
  std::string describe() const;

  friend bool operator==(const ParallelConfig&, const ParallelConfig&) = default;
};

/// Contiguous pipeline stages: stage p holds layers [first, end) of the model.
struct StageLayers {
  std::int64_t first = 0;
  std::int64_t end = 0;
  std::int64_t count() const { return end - first; }
};
/// The layers of stage `p` of `pp` for a model of `layers` layers (divisible by pp).
StageLayers stage_layers(std::int64_t layers, int pp, int p);
/// The V model chunks stage `p` holds when the layers form PP·V virtual stages of
/// L/(PP·V) layers (Megatron's interleaving: chunk c is virtual stage c·PP + p). With V = 1,
/// the one chunk is stage_layers(layers, pp, p). Throws UsageError unless PP·V divides L.
std::vector<StageLayers> stage_chunks(std::int64_t layers, int pp, int virtual_stages, int p);
/// Every layer of stage_chunks(...), in order.
std::vector<std::int64_t> stage_layer_indices(std::int64_t layers, int pp, int virtual_stages,
                                              int p);

/// One rank's view of the parallel groups, like Megatron's parallel_state.
class ParallelLayout {
 public:
  /// Creates every TP, PP and DP group (in the same order on every rank) over `world` and
  /// keeps the caller's. Throws UsageError if `config` is invalid or its world size differs
  /// from world.size(). Creating groups sends no message.
  ParallelLayout(Communicator& world, const ParallelConfig& config);

  const ParallelConfig& config() const { return config_; }
  int rank() const { return rank_; }
  const Coords& coords() const { return coords_; }

  /// The caller's group of `kind`; its group rank is the caller's coordinate along `kind`.
  Communicator& group(GroupKind kind) { return groups_[static_cast<std::size_t>(kind)]; }
  Communicator& tensor_parallel() { return group(GroupKind::tp); }
  Communicator& pipeline_parallel() { return group(GroupKind::pp); }
  Communicator& data_parallel() { return group(GroupKind::dp); }

  bool is_first_stage() const { return coords_.p == 0; }
  bool is_last_stage() const { return coords_.p == config_.pp - 1; }
  /// PP group ranks of the neighbouring stages (valid unless first / last stage).
  int previous_stage() const { return coords_.p - 1; }
  int next_stage() const { return coords_.p + 1; }

 private:
  ParallelConfig config_;
  int rank_ = 0;
  Coords coords_;
  std::vector<Communicator> groups_;  // indexed by GroupKind
};

}  // namespace ranklab
