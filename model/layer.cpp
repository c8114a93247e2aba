#include "model/layer.hpp"

#include <fmt/format.h>

#include "model/kernels/dispatch.hpp"
#include "traces/error.hpp"

namespace ranklab {

namespace {

// The arithmetic runs in the kernels of the instruction set chosen for this process
// (model/kernels/dispatch.hpp); this file checks shapes, sizes the outputs and hands the
// kernels plain views of the storage.
template <typename Scalar>
const kernels::LayerKernels<Scalar>& kernel() {
  return kernels::active_kernels().of<Scalar>();
}

template <typename Scalar>
kernels::View<Scalar> view(Matrix<Scalar>& m) {
  return {m.data(), m.rows(), m.cols(), m.cols()};
}

template <typename Scalar>
kernels::ConstView<Scalar> view(const Eigen::Ref<const Matrix<Scalar>>& m) {
  return {m.data(), m.rows(), m.cols(), m.outerStride()};
}

template <typename Scalar>
kernels::ConstView<Scalar> const_view(const Matrix<Scalar>& m) {
  return {m.data(), m.rows(), m.cols(), m.cols()};
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
  const Eigen::Index rows = x.rows();
  cache.z1.resize(rows, params.inter());
  cache.cdf.resize(rows, params.inter());
  cache.a.resize(rows, params.inter());
  y.resize(rows, params.hidden());
  kernel<Scalar>().forward({.w1 = const_view(params.w1),
                            .b1 = params.b1.data(),
                            .w2 = const_view(params.w2),
                            .x = view<Scalar>(x),
                            .z1 = view(cache.z1),
                            .cdf = view(cache.cdf),
                            .a = view(cache.a),
                            .y = view(y)});
}

template <typename Scalar>
void add_output_bias(ConstVectorRef<Scalar> b2, Matrix<Scalar>& y) {
  if (b2.size() != y.cols()) {
    throw UsageError(fmt::format("add_output_bias: b2 has {} entries, the output has {} columns",
                                 b2.size(), y.cols()));
  }
  kernel<Scalar>().add_bias(b2.data(), view(y));
}

template <typename Scalar>
void layer_backward(const LayerParams<Scalar>& params, ConstMatrixRef<Scalar> x,
                    LayerCache<Scalar>& cache, ConstMatrixRef<Scalar> dy, LayerGrads<Scalar>& grads,
                    MatrixPtr<Scalar> dx, GradMode mode) {
  check_rows_cols("layer_backward: input x", x.rows(), x.cols(), cache.z1.rows(), params.hidden());
  check_rows_cols("layer_backward: output gradient dy", dy.rows(), dy.cols(), x.rows(),
                  params.hidden());
  if (mode == GradMode::accumulate) {
    check_same_shape(grads, params);
  } else {
    grads.w1.resize(params.inter(), params.hidden());  // no-ops in a steady state
    grads.b1.resize(params.inter());
    grads.w2.resize(params.hidden(), params.inter());
    grads.b2.resize(params.hidden());
  }
  cache.dz1.resize(x.rows(), params.inter());
  if (dx != nullptr) dx->resize(x.rows(), params.hidden());
  kernel<Scalar>().backward({.w1 = const_view(params.w1),
                             .w2 = const_view(params.w2),
                             .x = view<Scalar>(x),
                             .z1 = const_view(cache.z1),
                             .cdf = const_view(cache.cdf),
                             .a = const_view(cache.a),
                             .dy = view<Scalar>(dy),
                             .dz1 = view(cache.dz1),
                             .dw1 = view(grads.w1),
                             .db1 = grads.b1.data(),
                             .dw2 = view(grads.w2),
                             .db2 = grads.b2.data(),
                             .dx = dx != nullptr ? view(*dx) : kernels::View<Scalar>{},
                             .accumulate = mode == GradMode::accumulate});
}

template <typename Scalar>
Matrix<Scalar> gelu(ConstMatrixRef<Scalar> z) {
  Matrix<Scalar> out(z.rows(), z.cols());
  kernel<Scalar>().gelu(view<Scalar>(z), view(out));
  return out;
}

template <typename Scalar>
Matrix<Scalar> gelu_grad(ConstMatrixRef<Scalar> z) {
  Matrix<Scalar> out(z.rows(), z.cols());
  kernel<Scalar>().gelu_grad(view<Scalar>(z), view(out));
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
  return kernel<Scalar>().squared_error(view<Scalar>(y), view<Scalar>(target)) /
         static_cast<Scalar>(elements);
}

template <typename Scalar>
void mse_loss_grad_part(ConstMatrixRef<Scalar> y, ConstMatrixRef<Scalar> target, Matrix<Scalar>& dy,
                        std::int64_t elements) {
  check_rows_cols("mse_loss_grad: target", target.rows(), target.cols(), y.rows(), y.cols());
  // The factor is formed in double, as PyTorch's mse_loss_backward does.
  dy.resize(y.rows(), y.cols());
  kernel<Scalar>().scaled_difference(view<Scalar>(y), view<Scalar>(target),
                                     static_cast<Scalar>(2.0 / static_cast<double>(elements)),
                                     view(dy));
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
