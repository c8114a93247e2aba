// The project's generator, the default problem drawn from it, and ModelShape validation.
#include "model/random.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "emulator/random.hpp"
#include "model/init.hpp"
#include "model/shape.hpp"
#include "tests/model/model_test_support.hpp"
#include "traces/error.hpp"

namespace ranklab {
namespace {

//! SplitMix64 reproduces the published test vector (seed 1234567).
TEST(RandomTest, SplitMix64MatchesReferenceVector) {
  SplitMix64 generator(1234567);
  for (const std::uint64_t expected :
       {6457827717110365317ULL, 3203168211198807973ULL, 9817491932198370423ULL,
        4593380528125082431ULL, 16408922859458223821ULL}) {
    EXPECT_EQ(generator.next(), expected);
  }
}

//! xoshiro256** seeded by SplitMix64 and the polar normal sampler give fixed numbers (the
//! values come from an independent Python transcription of the same algorithms).
TEST(RandomTest, SequencesAreFixed) {
  Rng bits(0);
  for (const std::uint64_t expected : {11091344671253066420ULL, 13793997310169335082ULL,
                                       1900383378846508768ULL, 7684712102626143532ULL}) {
    EXPECT_EQ(bits.next_u64(), expected);
  }
  Rng normals(42);
  for (const double expected : {-0.7262191382447857, -0.21119691823195985, 0.2216227015035933,
                                0.5227716877560146, 0.46417731016247366}) {
    EXPECT_NEAR(normals.normal(), expected, 1e-15);
  }
}

//! Normal draws have mean 0 and variance 1 (200k samples: 5-sigma bounds), uniforms lie in [0,1).
TEST(RandomTest, NormalMomentsAndUniformRange) {
  Rng rng(7);
  constexpr int kCount = 200000;
  double sum = 0.0;
  double squares = 0.0;
  for (int k = 0; k < kCount; ++k) {
    const double v = rng.normal();
    sum += v;
    squares += v * v;
  }
  EXPECT_NEAR(sum / kCount, 0.0, 5.0 / std::sqrt(kCount));
  EXPECT_NEAR(squares / kCount, 1.0, 5.0 * std::sqrt(2.0 / kCount));
  for (int k = 0; k < 1000; ++k) {
    const double u = rng.uniform();
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, 1.0);
  }
}

//! Default data: the reference's seed scheme and standard deviations, float data is the
//! rounded double data, and the same seed gives the same bits.
TEST(InitTest, DefaultProblemFollowsTheReferenceScheme) {
  const ModelShape shape;
  EXPECT_EQ(weight_seed(0, 2, 1), 121u);
  EXPECT_EQ(input_seed(1, 1), 13001u);
  EXPECT_EQ(target_seed(0, 0), 4000u);

  const auto layers = default_layers<double>(shape);
  ASSERT_EQ(layers.size(), 4u);
  EXPECT_EQ(layers[3].w1.rows(), 64);
  EXPECT_EQ(layers[3].w1.cols(), 32);
  EXPECT_EQ(layers[3].w2.rows(), 32);
  EXPECT_EQ(layers[3].w2.cols(), 64);
  EXPECT_EQ(layers[0].w1, random_normal_matrix<double>(64, 32, 100, 1.0 / std::sqrt(32.0)));
  EXPECT_EQ(layers[2].b2, random_normal_vector<double>(32, 123, 0.1));
  // Sample standard deviations, loosely: W2 has 2048 entries of std 1/8.
  const double w2_std = std::sqrt(layers[1].w2.squaredNorm() / layers[1].w2.size());
  EXPECT_NEAR(w2_std, 0.125, 0.01);

  const Matrix<double> targets = default_targets<double>(shape, 1);
  EXPECT_EQ(targets, random_normal_matrix<double>(128, 32, 4001, 0.5));
  const Matrix<float> inputs32 = default_inputs<float>(shape, 0);
  EXPECT_EQ(inputs32, default_inputs<double>(shape, 0).cast<float>());
  EXPECT_EQ(inputs32, default_inputs<float>(shape, 0));
  EXPECT_NE(inputs32, default_inputs<float>(shape, 1));
}

//! Shape validation names the offending size.
TEST(ShapeTest, ValidationNamesTheBadSize) {
  EXPECT_NO_THROW(ModelShape{}.validate());
  EXPECT_EQ(ModelShape{}.rows(), 128);
  EXPECT_THROW_MSG((ModelShape{8, 16, 0, 64, 4}.validate()), UsageError,
                   "model shape: hidden must be positive, got 0");
  EXPECT_THROW_MSG((ModelShape{8, 16, 32, 64, -1}.validate()), UsageError,
                   "model shape: layers must be positive, got -1");
  EXPECT_THROW_MSG((ModelShape{1 << 20, 1 << 20, 1 << 20, 64, 4}.validate()), UsageError,
                   "is too large");
  EXPECT_THROW_MSG(default_layers<float>(ModelShape{0, 16, 32, 64, 4}), UsageError,
                   "batch must be positive");
}

}  // namespace
}  // namespace ranklab
