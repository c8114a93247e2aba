// Default weights, inputs and targets, drawn with the project's generator (model/random.hpp)
// from the same distributions and seed scheme as tests/reference/torch_reference.py:
//
//   W1 ~ N(0, 1/H)   seed 10000*s + 100 + 10*l + 0     (std 1/√H)
//   b1 ~ N(0, 0.01)  seed 10000*s + 100 + 10*l + 1     (variance 0.01: std 0.1)
//   W2 ~ N(0, 1/I)   seed 10000*s + 100 + 10*l + 2     (std 1/√I)
//   b2 ~ N(0, 0.01)  seed 10000*s + 100 + 10*l + 3     (std 0.1)
//   inputs of DP replica d:  seed 10000*s + 3000 + d, std 1
//   targets of DP replica d: seed 10000*s + 4000 + d, std 0.5
//
// Each tensor has its own generator, values are drawn in double and then rounded, so the
// float data is exactly the rounded double data. The numbers differ from PyTorch's (another
// generator); compare with PyTorch through its exported .npy files (model/golden.hpp).
// Like the reference, the weight seeds of layers 10 apart overlap past layer 9.
#pragma once

#include <cstdint>
#include <vector>

#include "model/layer.hpp"
#include "model/shape.hpp"

namespace ranklab {

/// Seed of parameter `index` (0 w1, 1 b1, 2 w2, 3 b2) of layer `layer` for run seed `seed`.
constexpr std::uint64_t weight_seed(std::uint64_t seed, std::uint64_t layer, std::uint64_t index) {
  return 10000 * seed + 100 + 10 * layer + index;
}

/// Seed of the inputs of DP replica `replica`.
constexpr std::uint64_t input_seed(std::uint64_t seed, std::uint64_t replica) {
  return 10000 * seed + 3000 + replica;
}

/// Seed of the targets of DP replica `replica`.
constexpr std::uint64_t target_seed(std::uint64_t seed, std::uint64_t replica) {
  return 10000 * seed + 4000 + replica;
}

/// Standard deviation of the default biases (variance 0.01).
inline constexpr double kBiasStddev = 0.1;
/// Standard deviation of the default targets.
inline constexpr double kTargetStddev = 0.5;

/// The shape.layers full (unsharded) layers of the default model. Validates the shape.
template <typename Scalar>
std::vector<LayerParams<Scalar>> default_layers(const ModelShape& shape, std::uint64_t seed = 0);

/// Inputs [batch*seq, hidden] of DP replica `replica`. Validates the shape.
template <typename Scalar>
Matrix<Scalar> default_inputs(const ModelShape& shape, std::uint64_t replica,
                              std::uint64_t seed = 0);

/// Targets [batch*seq, hidden] of DP replica `replica`. Validates the shape.
template <typename Scalar>
Matrix<Scalar> default_targets(const ModelShape& shape, std::uint64_t replica,
                               std::uint64_t seed = 0);

}  // namespace ranklab
