#include "model/layer.hpp"

#include <fmt/format.h>

#include <unsupported/Eigen/SpecialFunctions>

#include "traces/error.hpp"

namespace ranklab {

namespace {

constexpr double kInvSqrt2 = 0.70710678118654752440;    // 1/√2
constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1/√(2π)

// cdf = Φ(z) = ½(1 + erf(z/√2)). Eigen's array erf is vectorized for float (a rational
// approximation within a few ulp); a scalar std::erf loop would cost more than all the
// matrix products of a step (DESIGN.md §4). For double Eigen falls back to std::erf.
template <typename Scalar>
void gelu_cdf(ConstMatrixRef<Scalar> z, Matrix<Scalar>& cdf) {
  cdf.resize(z.rows(), z.cols());
  cdf.array() = Scalar(0.5) * (Scalar(1) + (z.array() * Scalar(kInvSqrt2)).erf());
}

// GELU'(z) = Φ(z) + z·φ(z) with φ(z) = exp(-z²/2)/√(2π), as an array expression over the
// Φ(z) that forward already computed, so backward pays one exp and no erf.
template <typename ZArray, typename CdfArray>
auto gelu_grad_expr(const Eigen::ArrayBase<ZArray>& z, const Eigen::ArrayBase<CdfArray>& cdf) {
  using Scalar = typename ZArray::Scalar;
  return cdf + z * (Scalar(-0.5) * z.square()).exp() * Scalar(kInvSqrt2Pi);
}

// dst = value, or dst += value, without a temporary for products.
template <typename Dst, typename Expr>
void store_grad(Dst& dst, const Expr& value, GradMode mode) {
  if (mode == GradMode::overwrite) {
    dst.noalias() = value;
  } else {
    dst.noalias() += value;
  }
}

void check_rows_cols(const char* what, Eigen::Index rows, Eigen::Index cols, Eigen::Index want_rows,
                     Eigen::Index want_cols) {
  if (rows != want_rows || cols != want_cols) {
    throw UsageError(
        fmt::format("{} is [{}, {}], expected [{}, {}]", what, rows, cols, want_rows, want_cols));
  }
}

template <typename Scalar>
void check_same_shape(const LayerParams<Scalar>& grads, const LayerParams<Scalar>& params) {
  grads.check();
  if (grads.hidden() != params.hidden() || grads.inter() != params.inter()) {
    throw UsageError(fmt::format(
        "layer_backward: accumulating into gradients of H={} I={} for a layer of H={} I={}",
        grads.hidden(), grads.inter(), params.hidden(), params.inter()));
  }
}

}  // namespace

template <typename Scalar>
LayerParams<Scalar> LayerParams<Scalar>::zeros(Eigen::Index hidden, Eigen::Index inter) {
  return {Matrix<Scalar>::Zero(inter, hidden), Vector<Scalar>::Zero(inter),
          Matrix<Scalar>::Zero(hidden, inter), Vector<Scalar>::Zero(hidden)};
}

template <typename Scalar>
void LayerParams<Scalar>::check() const {
  const Eigen::Index h = hidden();
  const Eigen::Index i = inter();
  if (b1.size() != i || w2.rows() != h || w2.cols() != i || b2.size() != h) {
    throw UsageError(fmt::format(
        "layer parameters disagree: w1 [{}, {}] (I={}, H={}) needs b1 [{}], w2 [{}, {}], b2 [{}]; "
        "found b1 [{}], w2 [{}, {}], b2 [{}]",
        i, h, i, h, i, h, i, h, b1.size(), w2.rows(), w2.cols(), b2.size()));
  }
}

template <typename Scalar>
void layer_forward(const LayerParams<Scalar>& params, ConstMatrixRef<Scalar> x,
                   LayerCache<Scalar>& cache, Matrix<Scalar>& y) {
  if (x.cols() != params.hidden()) {
    throw UsageError(
        fmt::format("layer_forward: input has {} columns, the layer's hidden size is {}", x.cols(),
                    params.hidden()));
  }
  cache.z1.noalias() = x * params.w1.transpose();
  cache.z1.rowwise() += params.b1.transpose();
  gelu_cdf<Scalar>(cache.z1, cache.cdf);
  cache.a.resize(cache.z1.rows(), cache.z1.cols());
  cache.a.array() = cache.z1.array() * cache.cdf.array();
  y.noalias() = cache.a * params.w2.transpose();
}

template <typename Scalar>
void add_output_bias(ConstVectorRef<Scalar> b2, Matrix<Scalar>& y) {
  if (b2.size() != y.cols()) {
    throw UsageError(fmt::format("add_output_bias: b2 has {} entries, the output has {} columns",
                                 b2.size(), y.cols()));
  }
  y.rowwise() += b2.transpose();
}

template <typename Scalar>
void layer_backward(const LayerParams<Scalar>& params, ConstMatrixRef<Scalar> x,
                    LayerCache<Scalar>& cache, ConstMatrixRef<Scalar> dy, LayerGrads<Scalar>& grads,
                    MatrixPtr<Scalar> dx, GradMode mode) {
  check_rows_cols("layer_backward: input x", x.rows(), x.cols(), cache.z1.rows(), params.hidden());
  check_rows_cols("layer_backward: output gradient dy", dy.rows(), dy.cols(), x.rows(),
                  params.hidden());
  if (mode == GradMode::accumulate) check_same_shape(grads, params);

  // Second linear: y = a·W2ᵀ (+ b2).
  store_grad(grads.w2, dy.transpose() * cache.a, mode);
  store_grad(grads.b2, dy.colwise().sum().transpose(), mode);
  cache.dz1.noalias() = dy * params.w2;
  // Through GELU, in place: dz1 = da ⊙ GELU'(z1).
  cache.dz1.array() *= gelu_grad_expr(cache.z1.array(), cache.cdf.array());
  // First linear: z1 = x·W1ᵀ + b1.
  store_grad(grads.w1, cache.dz1.transpose() * x, mode);
  store_grad(grads.b1, cache.dz1.colwise().sum().transpose(), mode);
  if (dx != nullptr) dx->noalias() = cache.dz1 * params.w1;
}

template <typename Scalar>
Matrix<Scalar> gelu(ConstMatrixRef<Scalar> z) {
  Matrix<Scalar> out;
  gelu_cdf<Scalar>(z, out);
  out.array() *= z.array();
  return out;
}

template <typename Scalar>
Matrix<Scalar> gelu_grad(ConstMatrixRef<Scalar> z) {
  Matrix<Scalar> cdf;
  gelu_cdf<Scalar>(z, cdf);
  Matrix<Scalar> out(z.rows(), z.cols());
  out.array() = gelu_grad_expr(z.array(), cdf.array());
  return out;
}

template <typename Scalar>
Scalar mse_loss(ConstMatrixRef<Scalar> y, ConstMatrixRef<Scalar> target) {
  return mse_loss_part<Scalar>(y, target, y.size());
}

template <typename Scalar>
void mse_loss_grad(ConstMatrixRef<Scalar> y, ConstMatrixRef<Scalar> target, Matrix<Scalar>& dy) {
  mse_loss_grad_part<Scalar>(y, target, dy, y.size());
}

template <typename Scalar>
Scalar mse_loss_part(ConstMatrixRef<Scalar> y, ConstMatrixRef<Scalar> target,
                     std::int64_t elements) {
  check_rows_cols("mse_loss: target", target.rows(), target.cols(), y.rows(), y.cols());
  return (y - target).squaredNorm() / static_cast<Scalar>(elements);
}

template <typename Scalar>
void mse_loss_grad_part(ConstMatrixRef<Scalar> y, ConstMatrixRef<Scalar> target, Matrix<Scalar>& dy,
                        std::int64_t elements) {
  check_rows_cols("mse_loss_grad: target", target.rows(), target.cols(), y.rows(), y.cols());
  // The factor is formed in double, as PyTorch's mse_loss_backward does.
  dy.noalias() = (y - target) * static_cast<Scalar>(2.0 / static_cast<double>(elements));
}

template <typename Scalar>
LayerParams<Scalar> shard_layer(const LayerParams<Scalar>& full, int tp_rank, int tp_size) {
  full.check();
  if (tp_size <= 0 || tp_rank < 0 || tp_rank >= tp_size) {
    throw UsageError(fmt::format("shard_layer: TP rank {} is not in [0, {})", tp_rank, tp_size));
  }
  if (full.inter() % tp_size != 0) {
    throw UsageError(fmt::format("shard_layer: intermediate size {} is not divisible by TP={}",
                                 full.inter(), tp_size));
  }
  const Eigen::Index local = full.inter() / tp_size;
  const Eigen::Index first = tp_rank * local;
  return {full.w1.middleRows(first, local), full.b1.segment(first, local),
          full.w2.middleCols(first, local), full.b2};
}

#define RANKLAB_INSTANTIATE_LAYER(Scalar)                                                  \
  template struct LayerParams<Scalar>;                                                     \
  template void layer_forward<Scalar>(const LayerParams<Scalar>&, ConstMatrixRef<Scalar>,  \
                                      LayerCache<Scalar>&, Matrix<Scalar>&);               \
  template void add_output_bias<Scalar>(ConstVectorRef<Scalar>, Matrix<Scalar>&);          \
  template void layer_backward<Scalar>(const LayerParams<Scalar>&, ConstMatrixRef<Scalar>, \
                                       LayerCache<Scalar>&, ConstMatrixRef<Scalar>,        \
                                       LayerGrads<Scalar>&, MatrixPtr<Scalar>, GradMode);  \
  template Matrix<Scalar> gelu<Scalar>(ConstMatrixRef<Scalar>);                            \
  template Matrix<Scalar> gelu_grad<Scalar>(ConstMatrixRef<Scalar>);                       \
  template Scalar mse_loss<Scalar>(ConstMatrixRef<Scalar>, ConstMatrixRef<Scalar>);        \
  template void mse_loss_grad<Scalar>(ConstMatrixRef<Scalar>, ConstMatrixRef<Scalar>,      \
                                      Matrix<Scalar>&);                                    \
  template Scalar mse_loss_part<Scalar>(ConstMatrixRef<Scalar>, ConstMatrixRef<Scalar>,    \
                                        std::int64_t);                                     \
  template void mse_loss_grad_part<Scalar>(ConstMatrixRef<Scalar>, ConstMatrixRef<Scalar>, \
                                           Matrix<Scalar>&, std::int64_t);                 \
  template LayerParams<Scalar> shard_layer<Scalar>(const LayerParams<Scalar>&, int, int);

RANKLAB_INSTANTIATE_LAYER(float)
RANKLAB_INSTANTIATE_LAYER(double)

#undef RANKLAB_INSTANTIATE_LAYER

}  // namespace ranklab
