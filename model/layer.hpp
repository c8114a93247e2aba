// One MLP layer of the seed model (DESIGN.md §4), forward and backward by hand:
//
//   z1 = x·W1ᵀ + b1      a = GELU(z1)      y = a·W2ᵀ      (then y += b2, a separate step)
//
// x and y are [rows, H] (rows = B*S), z1 and a are [rows, I]. b2 is added by its own
// function because under tensor parallelism (Megatron) it must come after the all_reduce of
// the partial outputs: a TP shard of a layer is simply a LayerParams whose W1/b1 hold rows
// [t*I/TP, (t+1)*I/TP), whose W2 holds the same columns, and whose b2 is the full vector
// (shard_layer). layer_forward and layer_backward then run unchanged on the shard; the
// caller all_reduces y (forward) and dx (backward) over the TP group.
//
// Backward (golden_check_numpy.py writes out the same formulas):
//   dW2 = dyᵀ·a   db2 = Σrows dy   da = dy·W2   dz1 = da ⊙ GELU'(z1)
//   dW1 = dz1ᵀ·x  db1 = Σrows dz1  dx = dz1·W1
// with GELU(z) = z·Φ(z), Φ(z) = ½(1 + erf(z/√2)), GELU'(z) = Φ(z) + z·φ(z).
#pragma once

#include <cstdint>

#include "model/tensor.hpp"

namespace ranklab {

/// Parameters of one layer, PyTorch Linear layout: w1 [I,H], b1 [I], w2 [H,I], b2 [H].
/// A TP shard has I/TP in place of I (see shard_layer).
template <typename Scalar>
struct LayerParams {
  Matrix<Scalar> w1;
  Vector<Scalar> b1;
  Matrix<Scalar> w2;
  Vector<Scalar> b2;

  /// H, the width of the layer's input and output.
  Eigen::Index hidden() const { return w1.cols(); }
  /// I (or I/TP for a shard), the width of the GELU activation.
  Eigen::Index inter() const { return w1.rows(); }

  /// All-zero parameters of the given sizes.
  static LayerParams zeros(Eigen::Index hidden, Eigen::Index inter);

  /// Throws UsageError unless the four shapes agree with w1's [I,H].
  void check() const;
};

/// Gradients have the shapes of the parameters they belong to.
template <typename Scalar>
using LayerGrads = LayerParams<Scalar>;

/// What layer_forward keeps for layer_backward (and the backward scratch), reused across
/// calls so that a steady-state step allocates nothing. The layer input x is not kept:
/// the caller owns it and passes it to backward again.
template <typename Scalar>
struct LayerCache {
  Matrix<Scalar> z1;   ///< pre-activation x·W1ᵀ + b1, [rows, I]
  Matrix<Scalar> cdf;  ///< Φ(z1), shared by GELU and its derivative
  Matrix<Scalar> a;    ///< GELU(z1), [rows, I]
  Matrix<Scalar> dz1;  ///< backward scratch: dL/dz1
};

/// Whether backward overwrites the gradients or adds to them (micro-batches).
enum class GradMode { overwrite, accumulate };

/// y = GELU(x·W1ᵀ + b1)·W2ᵀ, without b2; fills `cache` for layer_backward.
/// Throws UsageError if x does not have hidden() columns.
template <typename Scalar>
void layer_forward(const LayerParams<Scalar>& params, ConstMatrixRef<Scalar> x,
                   LayerCache<Scalar>& cache, Matrix<Scalar>& y);

/// y += b2 on every row: the last step of a layer, after the TP reduction if any.
template <typename Scalar>
void add_output_bias(ConstVectorRef<Scalar> b2, Matrix<Scalar>& y);

/// Backward of layer_forward + add_output_bias for output gradient dy [rows, H]; x and
/// cache must be those of the forward call. Writes (or, with GradMode::accumulate, adds)
/// dW1, db1, dW2, db2 into `grads` (which must then already have the parameter shapes);
/// writes dx [rows, H] unless dx is null (the first layer of a model needs none).
/// For a TP shard, dx is this shard's partial sum, to be all_reduced by the caller.
template <typename Scalar>
void layer_backward(const LayerParams<Scalar>& params, ConstMatrixRef<Scalar> x,
                    LayerCache<Scalar>& cache, ConstMatrixRef<Scalar> dy, LayerGrads<Scalar>& grads,
                    MatrixPtr<Scalar> dx, GradMode mode = GradMode::overwrite);

/// Exact (erf) GELU, elementwise: 0.5·z·(1 + erf(z/√2)), PyTorch's default.
template <typename Scalar>
Matrix<Scalar> gelu(ConstMatrixRef<Scalar> z);

/// Derivative of gelu, elementwise: Φ(z) + z·φ(z).
template <typename Scalar>
Matrix<Scalar> gelu_grad(ConstMatrixRef<Scalar> z);

/// Mean squared error over all elements, as torch.nn.functional.mse_loss (mean).
/// Throws UsageError if the shapes differ.
template <typename Scalar>
Scalar mse_loss(ConstMatrixRef<Scalar> y, ConstMatrixRef<Scalar> target);

/// dL/dy of mse_loss: 2·(y - target) / y.size().
template <typename Scalar>
void mse_loss_grad(ConstMatrixRef<Scalar> y, ConstMatrixRef<Scalar> target, Matrix<Scalar>& dy);

/// Micro-batches: the share of mse_loss over a whole batch of `elements` elements that the
/// rows `y` contribute, Σ(y - target)² / elements (Megatron's loss of a micro-batch divided
/// by the number of micro-batches). mse_loss(y, t) is mse_loss_part(y, t, y.size()).
template <typename Scalar>
Scalar mse_loss_part(ConstMatrixRef<Scalar> y, ConstMatrixRef<Scalar> target,
                     std::int64_t elements);

/// dL/dy of the whole batch's loss for the rows `y`: 2·(y - target) / elements, the same
/// bits as the matching rows of mse_loss_grad over the whole batch.
template <typename Scalar>
void mse_loss_grad_part(ConstMatrixRef<Scalar> y, ConstMatrixRef<Scalar> target, Matrix<Scalar>& dy,
                        std::int64_t elements);

/// TP shard t of `full` (parameters or gradients): w1 rows and b1 entries
/// [t*I/tp, (t+1)*I/tp), the same w2 columns, and all of b2.
/// Throws UsageError unless 0 <= tp_rank < tp_size and tp_size divides I.
template <typename Scalar>
LayerParams<Scalar> shard_layer(const LayerParams<Scalar>& full, int tp_rank, int tp_size);

}  // namespace ranklab
