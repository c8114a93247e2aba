// A parallel run and the PyTorch reference's golden sets (tests/reference): `--save` turns
// a run into a set with the reference's names (model/golden.hpp), and `--init-from` runs
// compare their results with the set's, rank by rank.
#pragma once

#include <optional>
#include <vector>

#include "model/golden.hpp"
#include "model/parallel_check.hpp"

namespace ranklab {

/// The golden set of a run: the problem's weights and data, the dense reference's outputs,
/// losses and DP-averaged gradients, each replica's loss from the run (its last stage, TP
/// rank 0) and every rank's local gradients. Ranks are numbered as the reference numbers
/// them (rank = d·PP·TP + p·TP + t, the manifest's rank_mapping) whatever config.order, so
/// a set saved from any run compares with PyTorch's. `results` is indexed by global rank.
template <typename Scalar>
GoldenSet<Scalar> make_golden_set(const Problem<Scalar>& problem, const ParallelConfig& config,
                                  const DenseReference<Scalar>& reference,
                                  const std::vector<RankResult<Scalar>>& results);

/// The rank's local gradients against the golden set's rank with the same (d, p, t),
/// layers and shard; nullopt when the set has no such rank (another layout, no hybrid run).
template <typename Scalar>
std::optional<ErrorStat> compare_rank_with_golden(const RankResult<Scalar>& result,
                                                  const GoldenSet<Scalar>& golden);

/// The dense reference against the set's dense results (losses, outputs, gradients merged
/// into one group each); nullopt unless the set has them for the same replicas and layers.
struct DenseGoldenCheck {
  ErrorStat loss;
  ErrorStat output;
  ErrorStat grads;
};
template <typename Scalar>
std::optional<DenseGoldenCheck> compare_dense_with_golden(const DenseReference<Scalar>& reference,
                                                          const GoldenSet<Scalar>& golden);

}  // namespace ranklab
