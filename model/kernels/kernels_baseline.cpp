// The kernels at the flags the project is built with (the x86-64 baseline by default): the
// set every CPU can run, and the one RANKLAB_ISA=baseline forces. Eigen's namespace is renamed
// here too (kernels_avx2.cpp says why): this unit's Eigen settings (layer_kernels.inl) must
// not leak into the rest of the program's Eigen, nor its Eigen into this unit.
#define Eigen ranklab_eigen_baseline
#define RANKLAB_KERNEL_NS baseline
#include "model/kernels/layer_kernels.inl"

namespace ranklab::kernels {

const KernelSet& baseline_kernels() {
  static constexpr KernelSet set{"baseline", baseline::table<float>(), baseline::table<double>()};
  return set;
}

}  // namespace ranklab::kernels
