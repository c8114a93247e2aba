// What a training step works on: the full (unsharded) weights and every DP replica's data,
// and the four runs of the seed test (shared/seeds/000): TP, PP and DP alone, and hybrid.
//
// A mode is a layout plus the part of the problem it trains, exactly as the reference's
// test functions (shared/reference/torch/parallel_reference.py) do:
//   tp      world = TP, layer 0 only, replica 0's data   (test_tensor_parallel)
//   pp      world = PP, every layer, replica 0's data     (test_pipeline_parallel)
//   dp      world = DP, every layer, replica d's data     (test_data_parallel)
//   hybrid  world = TP·PP·DP, every layer, replica d's   (test_hybrid)
// All four then run the same rank program (model/parallel_step.hpp).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "model/golden.hpp"
#include "model/layer.hpp"
#include "model/parallel_layout.hpp"
#include "model/shape.hpp"

namespace ranklab {

/// Which of the seed's runs.
enum class ParallelMode { tp, pp, dp, hybrid };

/// "tp", "pp", "dp", "hybrid".
std::string_view to_string(ParallelMode mode);
/// Parses the names above; throws UsageError listing them.
ParallelMode parse_parallel_mode(std::string_view text);

/// The layout `mode` runs for the requested degrees: tp -> {TP,1,1}, pp -> {1,PP,1},
/// dp -> {1,1,DP}, hybrid -> as requested. The rank order is kept.
ParallelConfig mode_config(ParallelMode mode, const ParallelConfig& requested);

/// The model shape `mode` trains: tp keeps one layer (layer 0), the others all.
ModelShape mode_shape(ParallelMode mode, const ModelShape& shape);

/// Weights and data of one run, in one dtype.
template <typename Scalar>
struct Problem {
  ModelShape shape;                         ///< shape.layers == layers.size()
  std::uint64_t seed = 0;                   ///< the seed the data came from (informative)
  std::vector<LayerParams<Scalar>> layers;  ///< full (unsharded) weights
  std::vector<Matrix<Scalar>> inputs;       ///< per DP replica, [B*S, H]
  std::vector<Matrix<Scalar>> targets;      ///< per DP replica, [B*S, H]

  int replicas() const { return static_cast<int>(inputs.size()); }
};

/// The default problem of the seed (model/init.hpp): `replicas` replicas of data.
template <typename Scalar>
Problem<Scalar> make_problem(const ModelShape& shape, int replicas, std::uint64_t seed = 0);

/// The weights and data of a golden set (its expected results are not part of a problem).
template <typename Scalar>
Problem<Scalar> problem_from_golden(const GoldenSet<Scalar>& set);

/// The part of `problem` that `mode` trains: its first mode_shape(...).layers layers, and
/// replica 0 only for tp and pp. Throws UsageError if the problem has fewer replicas than
/// the layout's DP degree needs.
template <typename Scalar>
Problem<Scalar> mode_problem(ParallelMode mode, const ParallelConfig& layout,
                             const Problem<Scalar>& problem);

}  // namespace ranklab
