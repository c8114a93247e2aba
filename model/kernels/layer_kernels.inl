// The Eigen code of the dense layer kernels, compiled once per instruction set: each
// kernels_<isa>.cpp includes this file inside its own namespace, RANKLAB_KERNEL_NS, after
// the unit has given Eigen a name of its own (kernels_avx2.cpp says why). Included nowhere else.
//
// Every function computes what model/layer.hpp documents; the ISA changes only the last bits
// (packet width changes the order of a reduction's sums; AVX2 and AVX-512 fuse multiply-adds
// and have their own erf and exp), never which operations run.
//
// The bits must not depend on where the data lies in memory either (a run's matrices are
// allocated afresh, at addresses that differ from run to run). Eigen peels the unaligned head
// of a row into scalar code, whose erf and exp are not the vectorized ones, and it picks a
// small product's coefficient path by the destination's alignment. So the transcendental
// elementwise work runs on fixed-size aligned chunks (`chunked`), column sums add whole rows,
// and every product goes through Eigen's GEMM (packed operands, the same order at any address).
#ifndef RANKLAB_KERNEL_NS
#error "layer_kernels.inl is included by model/kernels/kernels_<isa>.cpp only"
#endif

// Never the coefficient-based product (see above): its dot products follow the destination's
// alignment. Only this unit's Eigen, which has a name of its own, sees the setting.
#define EIGEN_GEMM_TO_COEFFBASED_THRESHOLD 1

#include <Eigen/Core>
#include <algorithm>
#include <unsupported/Eigen/SpecialFunctions>

#include "model/kernels/layer_kernels.hpp"

namespace ranklab::kernels::RANKLAB_KERNEL_NS {
namespace {

template <typename S>
using RowMatrix = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename S>
using ColVector = Eigen::Matrix<S, Eigen::Dynamic, 1>;

template <typename S>
using Mat = Eigen::Map<RowMatrix<S>, Eigen::Unaligned, Eigen::OuterStride<>>;
template <typename S>
using ConstMat = Eigen::Map<const RowMatrix<S>, Eigen::Unaligned, Eigen::OuterStride<>>;

template <typename S>
ConstView<S> as_const(View<S> v) {
  return {v.data, v.rows, v.cols, v.stride};
}

template <typename S>
Mat<S> map(View<S> v) {
  return Mat<S>(v.data, v.rows, v.cols, Eigen::OuterStride<>(v.stride));
}
template <typename S>
ConstMat<S> map(ConstView<S> v) {
  return ConstMat<S>(v.data, v.rows, v.cols, Eigen::OuterStride<>(v.stride));
}
template <typename S>
Eigen::Map<ColVector<S>> map_vector(S* data, Eigen::Index size) {
  return Eigen::Map<ColVector<S>>(data, size);
}
template <typename S>
Eigen::Map<const ColVector<S>> map_vector(const S* data, Eigen::Index size) {
  return Eigen::Map<const ColVector<S>>(data, size);
}

constexpr double kInvSqrt2 = 0.70710678118654752440;    // 1/√2
constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1/√(2π)

// Φ(z) = ½(1 + erf(z/√2)). Eigen's array erf is vectorized for float (a rational
// approximation within a few ulp); a scalar std::erf loop would cost more than all the
// matrix products of a step (DESIGN.md §4). For double Eigen falls back to std::erf.
template <typename ZArray>
auto cdf_expr(const Eigen::ArrayBase<ZArray>& z) {
  using S = typename ZArray::Scalar;
  return S(0.5) * (S(1) + (z * S(kInvSqrt2)).erf());
}

// GELU'(z) = Φ(z) + z·φ(z) with φ(z) = exp(-z²/2)/√(2π), over the Φ(z) that forward already
// computed, so backward pays one exp and no erf.
template <typename ZArray, typename CdfArray>
auto gelu_grad_expr(const Eigen::ArrayBase<ZArray>& z, const Eigen::ArrayBase<CdfArray>& cdf) {
  using S = typename ZArray::Scalar;
  return cdf + z * (S(-0.5) * z.square()).exp() * S(kInvSqrt2Pi);
}

// A multiple of every packet width (16 floats in AVX-512): a chunk is whole packets.
constexpr Eigen::Index kChunk = 64;
template <typename S>
using Chunk = Eigen::Array<S, kChunk, 1>;

// n < kChunk elements from `from` to `to` (a row's last, partial chunk), in fixed-size pieces
// (plain vector loads and stores), then one at a time. Not Eigen's run-time-length copy,
// which the compiler turns into a `rep movs`, whose start-up cost was a quarter of the
// elementwise work of a step (a whole chunk moves through a fixed-size map instead). A copy
// moves values: how it is done changes no bit.
constexpr Eigen::Index kPiece = 16;
template <typename S>
void copy_elements(S* to, const S* from, Eigen::Index n) {
  using Piece = Eigen::Array<S, kPiece, 1>;
  const auto piece = [&](Eigen::Index at) {
    Eigen::Map<Piece> into(to + at);
    into = Eigen::Map<const Piece>(from + at);
  };
  // Unrolled by hand: as a loop, GCC recognises a copy and makes it the `rep movs` again.
  static_assert(kChunk == 4 * kPiece);
  if (n >= kPiece) piece(0);
  if (n >= 2 * kPiece) piece(kPiece);
  if (n >= 3 * kPiece) piece(2 * kPiece);
  for (Eigen::Index i = n / kPiece * kPiece; i < n; ++i) to[i] = from[i];
}

// Whether a view's rows follow one another in memory, so that it is one run of elements.
template <typename S>
bool contiguous(View<S> v) {
  return v.stride == v.cols || v.rows <= 1;
}
// The same elements as one row (for a contiguous view).
template <typename S>
View<S> as_one_row(View<S> v) {
  const std::ptrdiff_t n = v.rows * v.cols;
  return {v.data, 1, n, n};
}

// f(out, in...) on every element of out: row by row, in chunks of kChunk elements copied into
// aligned fixed-size arrays (the last one padded with zeros), so that every element takes the
// same vectorized path wherever it lies in memory. Where every view is contiguous the rows
// run as one: an element's value does not depend on which chunk or lane it falls in (the
// function is elementwise, every lane the same packet code), and rows narrower than a chunk
// (the TP shards' 32 columns) then fill whole chunks instead of half-padded ones.
template <typename S, typename F, typename... In>
void chunked(View<S> out, F f, ConstView<In>... in) {
  if (out.rows > 1 && contiguous(out) && (contiguous(in) && ...)) {
    chunked<S>(as_one_row(out), f, as_one_row(in)...);
    return;
  }
  Chunk<S> result;
  for (std::ptrdiff_t r = 0; r < out.rows; ++r) {
    for (std::ptrdiff_t c = 0; c < out.cols; c += kChunk) {
      const Eigen::Index n = std::min<Eigen::Index>(kChunk, out.cols - c);
      const auto load = [&](ConstView<S> v) {
        const S* const from = v.data + r * v.stride + c;
        Chunk<S> chunk;
        if (n == kChunk) {
          chunk = Eigen::Map<const Chunk<S>>(from);
        } else {
          copy_elements(chunk.data(), from, n);
          chunk.tail(kChunk - n).setZero();
        }
        return chunk;
      };
      f(result, load(in)...);
      S* const to = out.data + r * out.stride + c;
      if (n == kChunk) {
        Eigen::Map<Chunk<S>> whole(to);
        whole = result;
      } else {
        copy_elements(to, result.data(), n);
      }
    }
  }
}

// out = Σ rows of m, or out += it: a row at a time, so each column's sum is the same sequence
// of additions at any address.
template <typename S>
void column_sums(ConstMat<S> m, S* out, bool accumulate) {
  auto result = map_vector(out, m.cols());
  if (m.rows() == 0) {
    if (!accumulate) result.setZero();
    return;
  }
  const auto sum_into = [&m](auto&& sum) {
    sum = m.row(0).transpose();
    for (Eigen::Index r = 1; r < m.rows(); ++r) sum += m.row(r).transpose();
  };
  if (accumulate) {
    ColVector<S> sum(m.cols());
    sum_into(sum);
    result += sum;
  } else {
    sum_into(result);
  }
}

// dst = value, or dst += value, without a temporary for products.
template <typename Dst, typename Expr>
void store(Dst&& dst, const Expr& value, bool accumulate) {
  if (accumulate) {
    dst.noalias() += value;
  } else {
    dst.noalias() = value;
  }
}

template <typename S>
void forward(const ForwardArgs<S>& args) {
  const ConstMat<S> x = map(args.x);
  const ConstMat<S> w1 = map(args.w1);
  Mat<S> z1 = map(args.z1);
  Mat<S> cdf = map(args.cdf);
  Mat<S> a = map(args.a);
  Mat<S> y = map(args.y);
  z1.noalias() = x * w1.transpose();
  z1.rowwise() += map_vector(args.b1, w1.rows()).transpose();
  chunked<S>(args.cdf, [](Chunk<S>& out, const Chunk<S>& z) { out = cdf_expr(z); }, as_const(args.z1));
  a.array() = z1.array() * cdf.array();
  y.noalias() = a * map(args.w2).transpose();
}

template <typename S>
void backward(const BackwardArgs<S>& args) {
  const ConstMat<S> dy = map(args.dy);
  const ConstMat<S> x = map(args.x);
  const ConstMat<S> a = map(args.a);
  Mat<S> dz1 = map(args.dz1);
  // Second linear: y = a·W2ᵀ (+ b2).
  store(map(args.dw2), dy.transpose() * a, args.accumulate);
  column_sums(dy, args.db2, args.accumulate);
  dz1.noalias() = dy * map(args.w2);
  // Through GELU, in place: dz1 = da ⊙ GELU'(z1).
  chunked<S>(
      args.dz1,
      [](Chunk<S>& out, const Chunk<S>& da, const Chunk<S>& z, const Chunk<S>& cdf) {
        out = da * gelu_grad_expr(z, cdf);
      },
      as_const(args.dz1), args.z1, args.cdf);
  // First linear: z1 = x·W1ᵀ + b1.
  store(map(args.dw1), dz1.transpose() * x, args.accumulate);
  column_sums(map(as_const(args.dz1)), args.db1, args.accumulate);
  if (args.dx.data != nullptr) map(args.dx).noalias() = dz1 * map(args.w1);
}

template <typename S>
void add_bias(const S* b, View<S> y) {
  map(y).rowwise() += map_vector(b, y.cols).transpose();
}

template <typename S>
void gelu(ConstView<S> z, View<S> out) {
  chunked<S>(out, [](Chunk<S>& o, const Chunk<S>& zc) { o = cdf_expr(zc) * zc; }, z);
}

template <typename S>
void gelu_grad(ConstView<S> z, View<S> out) {
  chunked<S>(
      out,
      [](Chunk<S>& o, const Chunk<S>& zc) {
        const Chunk<S> cdf = cdf_expr(zc);  // Φ(z), rounded as forward's cache holds it
        o = gelu_grad_expr(zc, cdf);
      },
      z);
}

template <typename S>
S squared_error(ConstView<S> y, ConstView<S> t) {
  return (map(y) - map(t)).squaredNorm();
}

template <typename S>
void scaled_difference(ConstView<S> y, ConstView<S> t, S factor, View<S> out) {
  map(out).noalias() = (map(y) - map(t)) * factor;
}

template <typename S>
constexpr LayerKernels<S> table() {
  return {&forward<S>, &backward<S>, &add_bias<S>, &gelu<S>, &gelu_grad<S>, &squared_error<S>,
          &scaled_difference<S>};
}

}  // namespace
}  // namespace ranklab::kernels::RANKLAB_KERNEL_NS
