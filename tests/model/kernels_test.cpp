// The run-time dispatched dense kernels (model/kernels): RANKLAB_ISA's choices and errors,
// every instruction set agreeing with the baseline within rounding, and bits that depend on
// the instruction set alone, never on where the data lies in memory.
#include "model/kernels/dispatch.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/layer.hpp"
#include "model/random.hpp"
#include "tests/model/model_test_support.hpp"
#include "traces/error.hpp"

namespace ranklab {
namespace {

using kernels::Isa;

constexpr Isa kEveryIsa[] = {Isa::baseline, Isa::avx2, Isa::avx512};

bool available(Isa isa) {
  for (const Isa a : kernels::available_isas()) {
    if (a == isa) return true;
  }
  return false;
}

//! RANKLAB_ISA: unset, empty or auto is the best available (the last of available_isas);
//! each available name is itself; an unknown name, or one this build or CPU lacks, is a
//! UsageError naming the variable.
TEST(KernelDispatchTest, ResolvesRanklabIsa) {
  const std::vector<Isa> isas = kernels::available_isas();
  ASSERT_FALSE(isas.empty());
  EXPECT_EQ(isas.front(), Isa::baseline);
  EXPECT_EQ(kernels::resolve_isa(nullptr), isas.back());
  EXPECT_EQ(kernels::resolve_isa("auto"), isas.back());
  EXPECT_EQ(kernels::resolve_isa(""), isas.back());
  for (const Isa isa : kEveryIsa) {
    const std::string name(kernels::to_string(isa));
    if (available(isa)) {
      EXPECT_EQ(kernels::resolve_isa(name.c_str()), isa);
    } else {
      EXPECT_THROW_MSG(kernels::resolve_isa(name.c_str()), UsageError, "RANKLAB_ISA=" + name);
      EXPECT_THROW_MSG(kernels::use_isa(isa), UsageError, name + " is not available here");
    }
  }
  EXPECT_THROW_MSG(kernels::resolve_isa("sse9"), UsageError,
                   "RANKLAB_ISA=sse9: unknown instruction set (expected auto, baseline, avx2 or "
                   "avx512)");
  EXPECT_THROW_MSG(kernels::resolve_isa("AVX2"), UsageError, "unknown instruction set");
}

//! use_isa switches the kernels layer.cpp calls, and ScopedIsa restores them.
TEST(KernelDispatchTest, UseIsaSwitchesTheActiveKernels) {
  const Isa before = kernels::active_isa();
  for (const Isa isa : kernels::available_isas()) {
    const testing::ScopedIsa scoped(isa);
    EXPECT_EQ(kernels::active_isa(), isa);
    EXPECT_EQ(std::string(kernels::active_kernels().isa), kernels::to_string(isa));
  }
  EXPECT_EQ(kernels::active_isa(), before);
}

// Everything one forward and backward of a layer computes, in float.
struct LayerRun {
  Matrix<float> y, z1, a, dx;
  LayerGrads<float> grads;
  float loss = 0;
};

// Odd sizes, so that rows end in partial packets and row blocks start off any alignment.
constexpr Eigen::Index kRows = 19, kHidden = 13, kInter = 37;

LayerParams<float> odd_layer() {
  return {random_normal_matrix<float>(kInter, kHidden, 71, 0.5),
          random_normal_vector<float>(kInter, 72, 0.3),
          random_normal_matrix<float>(kHidden, kInter, 73, 0.5),
          random_normal_vector<float>(kHidden, 74, 0.3)};
}

// The layer on `x` (a view, possibly into a larger matrix), with fresh storage for everything
// it writes: each call's outputs lie at new heap addresses.
LayerRun run_layer(const LayerParams<float>& params, ConstMatrixRef<float> x,
                   ConstMatrixRef<float> target) {
  LayerRun run;
  LayerCache<float> cache;
  layer_forward<float>(params, x, cache, run.y);
  add_output_bias<float>(params.b2, run.y);
  run.loss = mse_loss<float>(run.y, target);
  Matrix<float> dy;
  mse_loss_grad<float>(run.y, target, dy);
  layer_backward<float>(params, x, cache, dy, run.grads, &run.dx);
  run.z1 = cache.z1;
  run.a = cache.a;
  return run;
}

bool same_bits(const LayerRun& p, const LayerRun& q) {
  return p.y == q.y && p.z1 == q.z1 && p.a == q.a && p.dx == q.dx && p.loss == q.loss &&
         p.grads.w1 == q.grads.w1 && p.grads.b1 == q.grads.b1 && p.grads.w2 == q.grads.w2 &&
         p.grads.b2 == q.grads.b2;
}

//! On every ISA, a layer's forward, loss and backward give the same bits when the input is a
//! block of rows at another offset inside a larger matrix and every output is stored anew.
//! (Eigen's own loops peel an unaligned head into scalar code whose erf and exp differ from
//! the vectorized ones: with AVX-512 the bits then followed the heap's addresses.)
TEST(KernelDispatchTest, BitsDoNotDependOnAddresses) {
  const LayerParams<float> params = odd_layer();
  const Matrix<float> target = random_normal_matrix<float>(kRows, kHidden, 75, 1.0);
  for (const Isa isa : kernels::available_isas()) {
    const testing::ScopedIsa scoped(isa);
    const Matrix<float> x = random_normal_matrix<float>(kRows, kHidden, 76, 1.0);
    const LayerRun reference = run_layer(params, x, target);
    for (Eigen::Index offset = 1; offset <= 5; ++offset) {
      // x as rows [offset, offset + kRows) of a larger matrix: its data starts offset·13
      // floats further, which is every alignment modulo 64 bytes in turn.
      Matrix<float> larger = Matrix<float>::Zero(kRows + offset, kHidden);
      larger.middleRows(offset, kRows) = x;
      std::vector<Matrix<float>> spacers;  // shifts the heap under the outputs too
      spacers.emplace_back(offset, 3);
      const LayerRun shifted = run_layer(params, larger.middleRows(offset, kRows), target);
      EXPECT_TRUE(same_bits(reference, shifted))
          << kernels::to_string(isa) << ", input offset by " << offset << " rows";
    }
  }
}

//! On every ISA, GELU and its derivative give the same bits on a matrix whose rows lie one
//! after another (the kernels run them as one run of elements, chunks spanning rows) as on
//! the same values as a block of a wider matrix (row by row, a row's last chunk padded):
//! widths narrower than a chunk (the TP shards' 32), not dividing it, and wider.
TEST(KernelDispatchTest, ContiguousRowsGiveTheBitsOfRowByRow) {
  for (const Isa isa : kernels::available_isas()) {
    const testing::ScopedIsa scoped(isa);
    for (const Eigen::Index width : {32, 13, 64, 100}) {
      const Matrix<float> z = random_normal_matrix<float>(kRows, width, 91, 2.0);
      Matrix<float> wider = Matrix<float>::Zero(kRows, width + 7);
      wider.leftCols(width) = z;
      const auto block = wider.leftCols(width);
      EXPECT_TRUE(gelu<float>(z) == gelu<float>(block))
          << kernels::to_string(isa) << ", width " << width;
      EXPECT_TRUE(gelu_grad<float>(z) == gelu_grad<float>(block))
          << kernels::to_string(isa) << ", width " << width;
    }
  }
}

//! Every ISA computes what the baseline does, within float rounding: the GELU, its
//! derivative, the loss and a layer's forward and backward.
TEST(KernelDispatchTest, EveryIsaAgreesWithTheBaseline) {
  const LayerParams<float> params = odd_layer();
  const Matrix<float> x = random_normal_matrix<float>(kRows, kHidden, 81, 1.0);
  const Matrix<float> target = random_normal_matrix<float>(kRows, kHidden, 82, 1.0);
  const Matrix<float> z = random_normal_matrix<float>(kRows, kInter, 83, 2.0);
  LayerRun base;
  Matrix<float> base_gelu, base_grad;
  {
    const testing::ScopedIsa scoped(Isa::baseline);
    base = run_layer(params, x, target);
    base_gelu = gelu<float>(z);
    base_grad = gelu_grad<float>(z);
  }
  for (const Isa isa : kernels::available_isas()) {
    const testing::ScopedIsa scoped(isa);
    const LayerRun run = run_layer(params, x, target);
    const char* name = kernels::active_kernels().isa;
    constexpr double kTol = 2e-5;  // relative to the largest entry; float has 6e-8 per ulp
    const auto close = [](const auto& got, const auto& want) {
      return testing::max_abs_diff(got, want) <= kTol * std::max(1.0, testing::max_abs(want));
    };
    EXPECT_TRUE(close(run.y, base.y)) << name;
    EXPECT_TRUE(close(run.dx, base.dx)) << name;
    EXPECT_TRUE(close(run.grads.w1, base.grads.w1)) << name;
    EXPECT_TRUE(close(run.grads.b1, base.grads.b1)) << name;
    EXPECT_TRUE(close(run.grads.w2, base.grads.w2)) << name;
    EXPECT_TRUE(close(run.grads.b2, base.grads.b2)) << name;
    EXPECT_NEAR(run.loss, base.loss, kTol * base.loss) << name;
    EXPECT_TRUE(close(gelu<float>(z), base_gelu)) << name;
    EXPECT_TRUE(close(gelu_grad<float>(z), base_grad)) << name;
  }
}

}  // namespace
}  // namespace ranklab
