// The kernels for AVX2 with FMA: this unit alone is compiled with -mavx2 -mfma
// (model/CMakeLists.txt), and the dispatcher uses it only on a CPU that has both.
//
// Eigen is all templates and inline functions, which the linker merges across units by name:
// an AVX2 copy of some Eigen helper could replace the baseline copy everywhere, and run AVX2
// instructions on a CPU without them. Renaming Eigen's namespace in this unit (a macro, before
// the first Eigen include) gives every Eigen symbol here a name of its own; the interface it
// exports (layer_kernels.hpp) carries no Eigen type.
#if !defined(__AVX2__) || !defined(__FMA__)
#error "kernels_avx2.cpp must be compiled with -mavx2 -mfma"
#endif
#define Eigen ranklab_eigen_avx2
#define RANKLAB_KERNEL_NS avx2
#include "model/kernels/layer_kernels.inl"

namespace ranklab::kernels {

const KernelSet& avx2_kernels() {
  static constexpr KernelSet set{"avx2", avx2::table<float>(), avx2::table<double>()};
  return set;
}

}  // namespace ranklab::kernels
