// Layer math: GELU values, backward against finite differences, MSE, and the TP shard
// identity that the tensor-parallel half relies on.
#include "model/layer.hpp"

#include <gtest/gtest.h>

#include <functional>

#include "model/random.hpp"
#include "tests/model/model_test_support.hpp"
#include "traces/error.hpp"

namespace ranklab {
namespace {

using testing::max_abs_diff;

struct KnownGelu {
  double x, gelu, grad;  // from Python's math.erf, exact to ~1 ulp
};
constexpr KnownGelu kKnown[] = {
    {0.0, 0.0, 0.5},
    {0.5, 0.34573123063700656, 0.8674951246561629},
    {1.0, 0.8413447460685429, 1.0833154705876864},
    {-1.0, -0.15865525393145707, -0.08331547058768629},
    {2.0, 1.9544997361036416, 1.085231801078197},
    {-3.0, -0.00404969409489031, -0.011945647204183918},
    {4.5, 4.4999847104709385, 1.0000685291618563},
    {-6.0, -5.919525869479969e-09, -3.546870945402639e-08},
};

template <typename Scalar>
void expect_known_gelu(double tolerance) {
  Matrix<Scalar> z(1, std::size(kKnown));
  for (std::size_t k = 0; k < std::size(kKnown); ++k) z(0, k) = static_cast<Scalar>(kKnown[k].x);
  const Matrix<Scalar> value = gelu<Scalar>(z);
  const Matrix<Scalar> slope = gelu_grad<Scalar>(z);
  for (std::size_t k = 0; k < std::size(kKnown); ++k) {
    const auto scale = [](double v) { return std::max(1.0, std::abs(v)); };
    EXPECT_NEAR(value(0, k), kKnown[k].gelu, tolerance * scale(kKnown[k].gelu))
        << "x=" << kKnown[k].x;
    EXPECT_NEAR(slope(0, k), kKnown[k].grad, tolerance * scale(kKnown[k].grad))
        << "x=" << kKnown[k].x;
  }
}

//! GELU is the exact erf form: float64 within 1e-15, float32 within 1e-6 (relative to max(1,|v|)).
TEST(GeluTest, MatchesKnownValues) {
  expect_known_gelu<double>(1e-15);
  expect_known_gelu<float>(1e-6);
}

// A small layer with odd sizes, so transposed indexing mistakes cannot cancel out.
LayerParams<double> small_layer(std::uint64_t seed, Eigen::Index hidden, Eigen::Index inter) {
  return {random_normal_matrix<double>(inter, hidden, seed, 0.5),
          random_normal_vector<double>(inter, seed + 1, 0.3),
          random_normal_matrix<double>(hidden, inter, seed + 2, 0.5),
          random_normal_vector<double>(hidden, seed + 3, 0.3)};
}

// Checks d(loss)/d(value[k]) against central differences for every element of `value`.
void expect_gradient(const char* name, double* value, Eigen::Index size, const double* analytic,
                     const std::function<double()>& loss) {
  constexpr double kStep = 1e-6;
  // Truncation error is O(step^2) ~ 1e-12 and rounding ~ 1e-16 |loss| / step ~ 1e-10.
  constexpr double kTolerance = 1e-8;
  for (Eigen::Index k = 0; k < size; ++k) {
    const double saved = value[k];
    value[k] = saved + kStep;
    const double up = loss();
    value[k] = saved - kStep;
    const double down = loss();
    value[k] = saved;
    const double numeric = (up - down) / (2 * kStep);
    EXPECT_NEAR(analytic[k], numeric, kTolerance * std::max(1.0, std::abs(numeric)))
        << name << "[" << k << "]";
  }
}

//! Every parameter gradient and dx of one layer (b2 included) match central finite
//! differences in float64 within 1e-8 relative to max(1, |gradient|).
TEST(LayerTest, BackwardMatchesFiniteDifferences) {
  LayerParams<double> params = small_layer(11, 5, 7);
  Matrix<double> x = random_normal_matrix<double>(6, 5, 21, 1.0);
  const Matrix<double> weights = random_normal_matrix<double>(6, 5, 22, 1.0);
  // loss = Σ y ⊙ weights, so dL/dy = weights.
  const auto loss = [&] {
    LayerCache<double> cache;
    Matrix<double> y;
    layer_forward<double>(params, x, cache, y);
    add_output_bias<double>(params.b2, y);
    return (y.array() * weights.array()).sum();
  };
  LayerCache<double> cache;
  Matrix<double> y;
  layer_forward<double>(params, x, cache, y);
  LayerGrads<double> grads;
  Matrix<double> dx;
  layer_backward<double>(params, x, cache, weights, grads, &dx);

  expect_gradient("w1", params.w1.data(), params.w1.size(), grads.w1.data(), loss);
  expect_gradient("b1", params.b1.data(), params.b1.size(), grads.b1.data(), loss);
  expect_gradient("w2", params.w2.data(), params.w2.size(), grads.w2.data(), loss);
  expect_gradient("b2", params.b2.data(), params.b2.size(), grads.b2.data(), loss);
  expect_gradient("x", x.data(), x.size(), dx.data(), loss);
}

//! GradMode::accumulate adds to the existing gradients; a null dx skips the input gradient.
TEST(LayerTest, AccumulateAddsToGradients) {
  const LayerParams<double> params = small_layer(31, 4, 6);
  const Matrix<double> x = random_normal_matrix<double>(3, 4, 41, 1.0);
  const Matrix<double> dy = random_normal_matrix<double>(3, 4, 42, 1.0);
  LayerCache<double> cache;
  Matrix<double> y;
  layer_forward<double>(params, x, cache, y);
  LayerGrads<double> once;
  layer_backward<double>(params, x, cache, dy, once, nullptr);
  LayerGrads<double> twice = once;
  layer_backward<double>(params, x, cache, dy, twice, nullptr, GradMode::accumulate);
  EXPECT_EQ(max_abs_diff(twice.w1, 2 * once.w1), 0.0);
  EXPECT_EQ(max_abs_diff(twice.b1, 2 * once.b1), 0.0);
  EXPECT_EQ(max_abs_diff(twice.w2, 2 * once.w2), 0.0);
  EXPECT_EQ(max_abs_diff(twice.b2, 2 * once.b2), 0.0);

  LayerGrads<double> wrong = LayerGrads<double>::zeros(4, 5);
  EXPECT_THROW_MSG(
      layer_backward<double>(params, x, cache, dy, wrong, nullptr, GradMode::accumulate),
      UsageError, "accumulating into gradients of H=4 I=5 for a layer of H=4 I=6");
}

//! mse_loss is the mean of squares and its gradient 2(y - t)/n, checked by hand and by
//! finite differences.
TEST(MseTest, LossAndGradient) {
  Matrix<double> y(2, 2);
  y << 1, 2, 3, 4;
  Matrix<double> t(2, 2);
  t << 0, 2, 5, 3;
  EXPECT_DOUBLE_EQ(mse_loss<double>(y, t), (1.0 + 0.0 + 4.0 + 1.0) / 4.0);
  Matrix<double> dy;
  mse_loss_grad<double>(y, t, dy);
  Matrix<double> expected(2, 2);
  expected << 0.5, 0.0, -1.0, 0.5;
  EXPECT_EQ(max_abs_diff(dy, expected), 0.0);
  expect_gradient("y", y.data(), y.size(), dy.data(), [&] { return mse_loss<double>(y, t); });
  EXPECT_THROW_MSG(mse_loss<double>(y, Matrix<double>(2, 3)), UsageError,
                   "mse_loss: target is [2, 3], expected [2, 2]");
}

//! A TP shard is a layer with sliced weights: the shards' partial outputs sum (then + b2)
//! to the full output, their dx's sum to the full dx, and each shard's gradients are the
//! slices of the full gradients (b2's in full), for TP = 1, 2, 4.
TEST(LayerTest, ShardsSumToFullLayer) {
  const LayerParams<double> full = small_layer(51, 6, 8);
  const Matrix<double> x = random_normal_matrix<double>(5, 6, 61, 1.0);
  const Matrix<double> dy = random_normal_matrix<double>(5, 6, 62, 1.0);
  LayerCache<double> cache;
  Matrix<double> y_full;
  layer_forward<double>(full, x, cache, y_full);
  add_output_bias<double>(full.b2, y_full);
  LayerGrads<double> g_full;
  Matrix<double> dx_full;
  layer_backward<double>(full, x, cache, dy, g_full, &dx_full);

  for (const int tp : {1, 2, 4}) {
    Matrix<double> y_sum = Matrix<double>::Zero(5, 6);
    Matrix<double> dx_sum = Matrix<double>::Zero(5, 6);
    for (int t = 0; t < tp; ++t) {
      const LayerParams<double> shard = shard_layer(full, t, tp);
      Matrix<double> y;
      Matrix<double> dx;
      // Scalar is deduced from the parameters; x and dy convert to the views.
      layer_forward(shard, x, cache, y);
      y_sum += y;
      LayerGrads<double> g;
      layer_backward(shard, x, cache, dy, g, &dx);
      dx_sum += dx;
      const LayerGrads<double> expected = shard_layer(g_full, t, tp);
      EXPECT_LE(max_abs_diff(g.w1, expected.w1), 1e-14) << "tp " << tp << " t " << t;
      EXPECT_LE(max_abs_diff(g.b1, expected.b1), 1e-14);
      EXPECT_LE(max_abs_diff(g.w2, expected.w2), 1e-14);
      EXPECT_LE(max_abs_diff(g.b2, g_full.b2), 1e-14);
    }
    add_output_bias(full.b2, y_sum);
    EXPECT_LE(max_abs_diff(y_sum, y_full), 1e-14) << "tp " << tp;
    EXPECT_LE(max_abs_diff(dx_sum, dx_full), 1e-14) << "tp " << tp;
  }
}

//! Shape errors name the function and both sizes.
TEST(LayerTest, ShapeErrorsAreReported) {
  const LayerParams<double> params = small_layer(71, 4, 6);
  LayerCache<double> cache;
  Matrix<double> y;
  EXPECT_THROW_MSG(layer_forward<double>(params, Matrix<double>::Zero(3, 5), cache, y), UsageError,
                   "layer_forward: input has 5 columns, the layer's hidden size is 4");
  EXPECT_THROW_MSG(shard_layer(params, 0, 4), UsageError,
                   "intermediate size 6 is not divisible by TP=4");
  EXPECT_THROW_MSG(shard_layer(params, 2, 2), UsageError, "TP rank 2 is not in [0, 2)");
  LayerParams<double> broken = params;
  broken.b1.resize(5);
  EXPECT_THROW_MSG(broken.check(), UsageError, "found b1 [5]");
}

}  // namespace
}  // namespace ranklab
