// The traffic of a parallel run per group kind (TP, PP, DP), counted from its trace, and
// the traffic the seed's step implies (shared/reference/torch/README.md states it for the
// seed: stage 0 of TP2 PP2 DP2 does 2 TP all_reduces forward, 1 PP send, 1 PP recv, 1 TP
// all_reduce backward and 8 DP all_reduces). The CLI prints the first and checks it
// against the second; the tests assert them equal, rank by rank.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "model/parallel_layout.hpp"
#include "model/step_options.hpp"
#include "traces/event.hpp"
#include "traces/stats.hpp"

namespace ranklab {

/// A number of operations and their payload bytes: the trace tools' Traffic.
using OpTally = Traffic;

/// One rank's operations on the groups of one kind, by operation.
struct KindTraffic {
  OpTally all_reduce;
  OpTally send;
  OpTally recv;
  OpTally all_gather;      ///< sequence-parallel TP (bytes: the input shard)
  OpTally reduce_scatter;  ///< sequence-parallel TP (bytes: the output shard)
  OpTally other;           ///< any other operation on a group of this kind

  /// Every operation, and every byte, of the tallies.
  OpTally total() const;
  KindTraffic& operator+=(const KindTraffic& other);
  friend bool operator==(const KindTraffic&, const KindTraffic&) = default;
};

/// One rank's traffic, indexed by GroupKind.
struct RankTraffic {
  std::array<KindTraffic, 3> kinds;

  KindTraffic& operator[](GroupKind kind) { return kinds[static_cast<std::size_t>(kind)]; }
  const KindTraffic& operator[](GroupKind kind) const {
    return kinds[static_cast<std::size_t>(kind)];
  }
  friend bool operator==(const RankTraffic&, const RankTraffic&) = default;
};

/// The kind of a group from its name ("tp[0,1]" -> tp, as traces' group_kind reads it);
/// nullopt for other groups (world) and a name without members ("tp").
std::optional<GroupKind> group_kind_of(std::string_view group_name);

/// Each rank's completed operations on TP, PP and DP groups (others are not counted).
/// Throws TraceError if an event names a group the header does not list.
std::vector<RankTraffic> count_traffic(const Trace& trace);

/// The sum over ranks of one kind.
KindTraffic total_traffic(const std::vector<RankTraffic>& ranks, GroupKind kind);

/// What the step of model/parallel_step.hpp sends from `rank` with direct collectives, for
/// `config` training `shape` (the shape the mode trains) in elements of `element_bytes`,
/// under `options` (the seed's step by default). Per pass of the rank's schedule through a
/// chunk of n layers on a micro-batch of R = B·S/M rows:
///   TP (TP > 1), allreduce: n all_reduces of [R, H] forward, and n backward except that
///                virtual stage 0 reduces no input gradient for its first layer;
///            sp: reduce_scatters instead (of [R/TP, H] shards), and an all_gather of a
///                shard wherever full rows are needed: the input of each layer but the
///                model's first, the model output, each output gradient but the loss's
///   PP (PP > 1): one send or recv of [R, H] ([R/TP, H] under sp) per transfer
///   DP (DP > 1): per layer held, one all_reduce each of w1 [I/TP, H], b1 [I/TP],
///                w2 [H, I/TP] and b2 [H]
/// For the seed's step: per stage layer one TP all_reduce forward and one backward (but
/// layer 0 of stage 0), and a send and a recv per neighbouring stage.
RankTraffic expected_traffic(const ParallelConfig& config, const ModelShape& shape,
                             std::size_t element_bytes, int rank, const StepOptions& options = {});

}  // namespace ranklab
