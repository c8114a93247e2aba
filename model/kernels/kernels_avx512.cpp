// The kernels for AVX-512 (F, DQ, VL, BW; with FMA): this unit alone is compiled with those
// -m flags (model/CMakeLists.txt), and the dispatcher uses it only on a CPU that has them all.
// Eigen's namespace is renamed as in kernels_avx2.cpp, for the same reason.
#if !defined(__AVX512F__) || !defined(__AVX512DQ__) || !defined(__FMA__)
#error "kernels_avx512.cpp must be compiled with -mavx512f -mavx512dq -mavx512vl -mavx512bw -mfma"
#endif
#define Eigen ranklab_eigen_avx512
#define RANKLAB_KERNEL_NS avx512
#include "model/kernels/layer_kernels.inl"

namespace ranklab::kernels {

const KernelSet& avx512_kernels() {
  static constexpr KernelSet set{"avx512", avx512::table<float>(), avx512::table<double>()};
  return set;
}

}  // namespace ranklab::kernels
