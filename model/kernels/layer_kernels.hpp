// The dense layer kernels behind model/layer.hpp, in an Eigen-free interface: raw row-major
// views and one table of functions per instruction set (README.md, "How it works").
//
// The same Eigen code (layer_kernels.inl) is compiled once per ISA, each copy in its own
// translation unit with its own -m flags and its own names (see kernels_avx2.cpp), and the
// dispatcher (dispatch.hpp) picks one table for the whole process. Nothing Eigen crosses this
// interface: an Eigen type compiled with AVX-512 must never meet one compiled for the x86-64
// baseline, so the views below carry only pointers and sizes.
#pragma once

#include <cstddef>

namespace ranklab::kernels {

/// A row-major matrix in memory: element (r, c) is data[r * stride + c].
template <typename S>
struct View {
  S* data = nullptr;
  std::ptrdiff_t rows = 0;
  std::ptrdiff_t cols = 0;
  std::ptrdiff_t stride = 0;  ///< distance between rows, >= cols
};

template <typename S>
using ConstView = View<const S>;

/// layer_forward: z1 = x·W1ᵀ + b1, cdf = Φ(z1), a = z1·cdf, y = a·W2ᵀ. Outputs are sized by
/// the caller.
template <typename S>
struct ForwardArgs {
  ConstView<S> w1;  ///< [I, H]
  const S* b1;      ///< [I]
  ConstView<S> w2;  ///< [H, I]
  ConstView<S> x;   ///< [rows, H]
  View<S> z1, cdf, a;  ///< [rows, I]
  View<S> y;           ///< [rows, H]
};

/// layer_backward (model/layer.hpp gives the formulas). Outputs are sized by the caller;
/// with `accumulate` the gradients are added to, else overwritten. dx.data null: no dx.
template <typename S>
struct BackwardArgs {
  ConstView<S> w1, w2, x, z1, cdf, a, dy;
  View<S> dz1;  ///< scratch, [rows, I]
  View<S> dw1;
  S* db1;
  View<S> dw2;
  S* db2;
  View<S> dx;
  bool accumulate;
};

/// One instruction set's kernels for one scalar type.
template <typename S>
struct LayerKernels {
  void (*forward)(const ForwardArgs<S>&);
  void (*backward)(const BackwardArgs<S>&);
  /// y += b on every row.
  void (*add_bias)(const S* b, View<S> y);
  /// out = GELU(z), elementwise (out sized as z).
  void (*gelu)(ConstView<S> z, View<S> out);
  /// out = GELU'(z), elementwise.
  void (*gelu_grad)(ConstView<S> z, View<S> out);
  /// Σ (y - t)² over all elements.
  S (*squared_error)(ConstView<S> y, ConstView<S> t);
  /// out = (y - t)·factor, elementwise.
  void (*scaled_difference)(ConstView<S> y, ConstView<S> t, S factor, View<S> out);
};

/// Every kernel of one instruction set.
struct KernelSet {
  const char* isa;  ///< its name, as RANKLAB_ISA spells it
  LayerKernels<float> f32;
  LayerKernels<double> f64;

  template <typename S>
  const LayerKernels<S>& of() const {
    if constexpr (sizeof(S) == sizeof(float)) {
      return f32;
    } else {
      return f64;
    }
  }
};

// One per translation unit (kernels_<isa>.cpp); only those this build compiled exist
// (RANKLAB_KERNELS_AVX2 / RANKLAB_KERNELS_AVX512).
const KernelSet& baseline_kernels();
const KernelSet& avx2_kernels();
const KernelSet& avx512_kernels();

}  // namespace ranklab::kernels
