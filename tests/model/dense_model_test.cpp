// The dense reference: finite differences through a stack, stage splitting, DP averaging
// and determinism.
#include "model/dense_model.hpp"

#include <gtest/gtest.h>

#include "model/init.hpp"
#include "model/random.hpp"
#include "tests/model/model_test_support.hpp"
#include "traces/error.hpp"

namespace ranklab {
namespace {

using testing::max_abs_diff;

const ModelShape kSmall{2, 3, 4, 6, 3};

//! The gradient of the MSE loss through a 3-layer stack, for w1 of every layer and for the
//! input, matches central finite differences in float64 (within 1e-8 relative).
TEST(DenseModelTest, StackBackwardMatchesFiniteDifferences) {
  auto layers = default_layers<double>(kSmall, 5);
  Matrix<double> x = default_inputs<double>(kSmall, 0, 5);
  const Matrix<double> t = default_targets<double>(kSmall, 0, 5);
  const auto loss = [&] {
    StackCache<double> cache;
    return mse_loss<double>(dense_forward<double>(layers, x, cache), t);
  };
  StackCache<double> cache;
  Matrix<double> dy;
  mse_loss_grad<double>(dense_forward<double>(layers, x, cache), t, dy);
  std::vector<LayerGrads<double>> grads;
  Matrix<double> dx;
  dense_backward<double>(layers, cache, dy, grads, &dx);

  constexpr double kStep = 1e-6;
  const auto check = [&](const char* name, double* value, Eigen::Index size, const double* g) {
    for (Eigen::Index k = 0; k < size; ++k) {
      const double saved = value[k];
      value[k] = saved + kStep;
      const double up = loss();
      value[k] = saved - kStep;
      const double down = loss();
      value[k] = saved;
      const double numeric = (up - down) / (2 * kStep);
      EXPECT_NEAR(g[k], numeric, 1e-8 * std::max(1.0, std::abs(numeric)))
          << name << "[" << k << "]";
    }
  };
  for (std::size_t l = 0; l < layers.size(); ++l) {
    check("w1", layers[l].w1.data(), layers[l].w1.size(), grads[l].w1.data());
    check("b2", layers[l].b2.data(), layers[l].b2.size(), grads[l].b2.data());
  }
  check("x", x.data(), x.size(), dx.data());
}

//! Running the stack as two pipeline stages (layers [0,2) then [2,4), with dx handed back)
//! gives the same output and gradients, bit for bit, as one stack.
TEST(DenseModelTest, StagesComposeLikeOneStack) {
  const ModelShape shape;
  const auto layers = default_layers<float>(shape);
  const Matrix<float> x = default_inputs<float>(shape, 0);
  const Matrix<float> t = default_targets<float>(shape, 0);
  const ReplicaResult<float> whole = dense_step<float>(layers, x, t);

  const std::span<const LayerParams<float>> all(layers);
  StackCache<float> first;
  StackCache<float> second;
  // Scalar is deduced from the cache; spans and matrices convert.
  const Matrix<float> middle = dense_forward(all.subspan(0, 2), x, first);
  const Matrix<float>& output = dense_forward(all.subspan(2), middle, second);
  EXPECT_EQ(output, whole.output);
  Matrix<float> dy;
  mse_loss_grad<float>(output, t, dy);
  std::vector<LayerGrads<float>> g_second;
  std::vector<LayerGrads<float>> g_first;
  Matrix<float> d_middle;
  dense_backward(all.subspan(2), second, dy, g_second, &d_middle);
  dense_backward(all.subspan(0, 2), first, d_middle, g_first, nullptr);
  EXPECT_EQ(g_first[0].w1, whole.grads[0].w1);
  EXPECT_EQ(g_first[1].b1, whole.grads[1].b1);
  EXPECT_EQ(g_second[0].w2, whole.grads[2].w2);
  EXPECT_EQ(g_second[1].b2, whole.grads[3].b2);
}

//! DP averaging: each replica's result equals its own dense_step, the averaged gradient is
//! (g0 + g1) / 2, and a second run (reusing the storage) is bit-identical.
TEST(DenseModelTest, DataParallelAveragesReplicaGradients) {
  const ModelShape shape;
  const auto layers = default_layers<float>(shape);
  const std::vector<Matrix<float>> inputs = {default_inputs<float>(shape, 0),
                                             default_inputs<float>(shape, 1)};
  const std::vector<Matrix<float>> targets = {default_targets<float>(shape, 0),
                                              default_targets<float>(shape, 1)};
  StackCache<float> cache;
  DataParallelResult<float> result;
  dense_data_parallel<float>(layers, inputs, targets, cache, result);
  ASSERT_EQ(result.replicas.size(), 2u);
  for (std::size_t d = 0; d < 2; ++d) {
    const ReplicaResult<float> alone = dense_step<float>(layers, inputs[d], targets[d]);
    EXPECT_EQ(result.replicas[d].output, alone.output);
    EXPECT_EQ(result.replicas[d].loss, alone.loss);
    EXPECT_EQ(result.replicas[d].grads[1].w2, alone.grads[1].w2);
  }
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const Matrix<float> mean =
        (result.replicas[0].grads[l].w1 + result.replicas[1].grads[l].w1) / 2.0f;
    EXPECT_EQ(result.grads[l].w1, mean);
  }
  EXPECT_GT(result.replicas[0].loss, 0.0f);
  EXPECT_NE(result.replicas[0].loss, result.replicas[1].loss);

  DataParallelResult<float> again;
  dense_data_parallel<float>(layers, inputs, targets, cache, again);
  for (std::size_t l = 0; l < layers.size(); ++l) {
    EXPECT_EQ(again.grads[l].w1, result.grads[l].w1);
    EXPECT_EQ(again.grads[l].b2, result.grads[l].b2);
  }
}

//! Misuse is reported: no layers, a cache of another stack, unmatched replicas.
TEST(DenseModelTest, MisuseIsReported) {
  const auto layers = default_layers<double>(kSmall);
  const Matrix<double> x = default_inputs<double>(kSmall, 0);
  StackCache<double> cache;
  EXPECT_THROW_MSG(dense_forward<double>({}, x, cache), UsageError, "the stack has no layers");
  dense_forward<double>(layers, x, cache);
  std::vector<LayerGrads<double>> grads;
  EXPECT_THROW_MSG(dense_backward<double>(std::span(layers).first(2), cache, x, grads, nullptr),
                   UsageError, "2 layers, but the cache holds a forward pass of 3 layers");
  const std::vector<Matrix<double>> one = {x};
  EXPECT_THROW_MSG(dense_data_parallel<double>(layers, one, {}), UsageError,
                   "got 1 inputs and 0 targets");
}

}  // namespace
}  // namespace ranklab
