// Golden data sets as tests/reference/torch_reference.py exports them:
// manifest.json plus one .npy file per tensor, named
//
//   layer{l}.{w1,b1,w2,b2}.SFX.npy        full weights                      (inputs)
//   replica{d}.{inputs,targets}.SFX.npy   [B,S,H] data of DP replica d      (inputs)
//   replica{d}.output.SFX.npy             dense output of the last layer     (outputs)
//   dense.loss.SFX.npy                    [DP] dense loss per replica
//   dense.grad.layer{l}.{w1,...}.SFX.npy  dense gradients averaged over DP
//   hybrid.loss.SFX.npy                   [DP] loss of the TP/PP/DP run
//   hybrid.rank{r}.grad.layer{l}.{w1,...}.SFX.npy  rank r's TP shard gradient after DP averaging
//
// with SFX = f32 or f64. A set may hold both dtypes; each load picks one. Activations are
// returned as [B*S, H] matrices.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "model/layer.hpp"
#include "model/shape.hpp"

namespace ranklab {

/// The run a golden set describes (manifest.json "config").
struct GoldenConfig {
  int tp = 1;
  int pp = 1;
  int dp = 1;
  ModelShape shape;
  std::uint64_t seed = 0;

  friend bool operator==(const GoldenConfig&, const GoldenConfig&) = default;
};

/// One rank's local gradients from the hybrid run: the TP shard [first, end) of the
/// intermediate axis for each of its (global) layers.
template <typename Scalar>
struct GoldenRankGrads {
  int rank = 0;
  int d = 0;
  int p = 0;
  int t = 0;
  std::vector<std::int64_t> layers;  ///< global layer indices held by the rank
  std::int64_t first = 0;            ///< w1 rows / b1 entries / w2 columns [first, end)
  std::int64_t end = 0;
  std::vector<LayerGrads<Scalar>> grads;  ///< one per entry of layers
};

/// Weights, data and (where the set has them) expected results, in one dtype.
template <typename Scalar>
struct GoldenSet {
  GoldenConfig config;
  std::vector<LayerParams<Scalar>> layers;            ///< full (unsharded) weights
  std::vector<Matrix<Scalar>> inputs;                 ///< per DP replica, [B*S, H]
  std::vector<Matrix<Scalar>> targets;                ///< per DP replica, [B*S, H]
  std::vector<Matrix<Scalar>> outputs;                ///< dense output per replica; empty if absent
  std::vector<Scalar> dense_losses;                   ///< per replica; empty if absent
  std::vector<LayerGrads<Scalar>> dense_grads;        ///< averaged over DP; empty if absent
  std::vector<Scalar> hybrid_losses;                  ///< per replica; empty if absent
  std::vector<GoldenRankGrads<Scalar>> hybrid_grads;  ///< by rank; empty if absent
};

/// What a golden directory holds, from its manifest alone (no .npy file is read).
struct GoldenInfo {
  GoldenConfig config;
  bool has_float32 = false;
  bool has_float64 = false;
};

/// Reads DIRECTORY/manifest.json. Throws TraceError naming the path for a missing
/// directory or manifest, invalid JSON, or a config with missing or bad keys.
GoldenInfo read_golden_info(const std::filesystem::path& directory);

/// Loads the Scalar (float -> f32, double -> f64) part of a golden directory. Weights and
/// data are required; each expected result is loaded when manifest.json lists it. Throws
/// TraceError naming the path for a missing directory, manifest or file, a manifest without
/// this dtype or with missing keys, and any .npy problem (model/npy.hpp).
template <typename Scalar>
GoldenSet<Scalar> load_golden(const std::filesystem::path& directory);

/// Writes `set` under the same names, creating the directory, and writes manifest.json.
/// An existing manifest with the same config is merged (so a set can hold f32 and f64);
/// one with another config is an error. Empty result fields are not written.
/// Throws UsageError if the set's sizes disagree with its config, TraceError if a file cannot
/// be written or the directory holds a set of another config.
template <typename Scalar>
void save_golden(const std::filesystem::path& directory, const GoldenSet<Scalar>& set);

}  // namespace ranklab
