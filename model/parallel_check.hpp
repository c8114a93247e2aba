// The checks of a parallel run (issue 3 §3): every rank's loss (last stage), stage output
// and local gradients against the dense reference, sliced to the rank's TP shard and PP
// stage, with the DP average of the replicas' dense gradients. Errors are measured as
// parallel_reference.py does: the largest |computed - expected| of a group of tensors,
// relative to the group's largest |expected|.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "model/dense_model.hpp"
#include "model/parallel_step.hpp"

namespace ranklab {

/// Relative tolerance of the checks: float32 1e-5, float64 1e-12 (of the largest magnitude).
template <typename Scalar>
constexpr double relative_tolerance() {
  return sizeof(Scalar) == sizeof(float) ? 1e-5 : 1e-12;
}

/// The larger of two errors, NaN if either is (std::max drops a NaN in its second
/// argument, so a NaN or infinite result used to pass every check).
inline double worse_error(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? std::numeric_limits<double>::quiet_NaN()
                                        : std::max(a, b);
}

/// The error of a group of tensors against their expected values. A NaN or infinity in
/// either makes the error NaN or infinite, which no tolerance accepts.
struct ErrorStat {
  double max_abs = 0.0;   ///< max |computed - expected|
  double scale = 0.0;     ///< max |expected|
  bool compared = false;  ///< whether anything was added

  /// Adds one tensor (Eigen matrices or vectors of the same shape; throws UsageError if not).
  template <typename A, typename B>
  void add(const A& computed, const B& expected);
  /// Adds one scalar.
  void add_scalar(double computed, double expected);
  /// Merges another group into this one.
  void merge(const ErrorStat& other);

  /// max_abs / scale (max_abs itself when the scale is 0).
  double relative() const { return scale == 0.0 ? max_abs : max_abs / scale; }
  /// Whether max_abs <= tolerance * scale, both finite (false for a NaN or infinite value).
  bool within(double tolerance) const {
    return std::isfinite(max_abs) && std::isfinite(scale) && max_abs <= tolerance * scale;
  }

 private:
  [[noreturn]] static void throw_shape_mismatch(std::int64_t rows, std::int64_t cols,
                                                std::int64_t expected_rows,
                                                std::int64_t expected_cols);
};

template <typename A, typename B>
void ErrorStat::add(const A& computed, const B& expected) {
  if (computed.rows() != expected.rows() || computed.cols() != expected.cols()) {
    throw_shape_mismatch(computed.rows(), computed.cols(), expected.rows(), expected.cols());
  }
  compared = true;
  if (expected.size() == 0) return;
  const auto e = expected.template cast<double>();
  max_abs = worse_error(
      max_abs,
      (computed.template cast<double>() - e).cwiseAbs().template maxCoeff<Eigen::PropagateNaN>());
  scale = worse_error(scale, e.cwiseAbs().template maxCoeff<Eigen::PropagateNaN>());
}

/// One rank's verdict against the dense reference (and, where given, a golden set).
struct RankCheck {
  int rank = 0;
  Coords coords;
  std::vector<std::int64_t> layers;  ///< the global layers the rank holds
  ErrorStat loss;                    ///< last stage only (compared == false elsewhere)
  ErrorStat output;  ///< the stage output against the dense activation after the stage
                     ///< (its sequence shard under sp)
  ErrorStat grads;   ///< every local gradient against the sliced, DP-averaged dense one
  std::optional<ErrorStat> golden;  ///< the local gradients against the golden set's
  std::optional<ErrorStat> weights;  ///< the shards after an SGD update against the dense
                                     ///< reference's (model/dense_training.hpp)

  /// The largest absolute / relative error of the groups above.
  double max_abs() const;
  double max_relative() const;
  /// Whether every group is within `tolerance` (relative).
  bool ok(double tolerance) const;
};

/// The dense run of a problem: the DP reference, plus every replica's activations.
template <typename Scalar>
struct DenseReference {
  ModelShape shape;  ///< the problem's
  DataParallelResult<Scalar> result;
  /// activations[d][l]: output of layer l (b2 included) for replica d.
  std::vector<std::vector<Matrix<Scalar>>> activations;
};

/// Runs the problem densely on the calling thread: every replica, every layer.
template <typename Scalar>
DenseReference<Scalar> compute_dense_reference(const Problem<Scalar>& problem);

/// Checks `result` (a rank of a run of `config` on the problem `reference` came from).
/// Throws UsageError if the result does not have the shapes its coordinates imply.
template <typename Scalar>
RankCheck check_rank(const RankResult<Scalar>& result, const ParallelConfig& config,
                     const DenseReference<Scalar>& reference);

}  // namespace ranklab
