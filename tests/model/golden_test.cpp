// The dense model against the PyTorch golden sets shipped in tests/reference/golden, and the
// golden set loader and writer.
#include "model/golden.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <set>

#include "model/dense_model.hpp"
#include "tests/model/model_test_support.hpp"
#include "traces/error.hpp"

namespace ranklab {
namespace {

namespace fs = std::filesystem;
using testing::golden_dir;
using testing::golden_root;
using testing::max_abs;
using testing::max_abs_diff;
using testing::TempDir;

// Largest error of a group of tensors relative to the group's largest reference magnitude,
// the measure of tests/reference/torch_reference.py (|err| <= rtol * max|reference|).
struct GroupError {
  double error = 0.0;
  double scale = 0.0;
  template <typename A, typename B>
  void add(const A& computed, const B& reference) {
    error = std::max(error, max_abs_diff(computed, reference));
    scale = std::max(scale, max_abs(reference));
  }
  double relative() const { return scale == 0.0 ? error : error / scale; }
};

template <typename Scalar>
void expect_dense_matches_golden(const fs::path& dir, double tolerance) {
  const GoldenSet<Scalar> set = load_golden<Scalar>(dir);
  const auto dp = static_cast<std::size_t>(set.config.dp);
  const auto layers = static_cast<std::size_t>(set.config.shape.layers);
  ASSERT_EQ(set.outputs.size(), dp);
  ASSERT_EQ(set.dense_losses.size(), dp);
  ASSERT_EQ(set.dense_grads.size(), layers);
  const DataParallelResult<Scalar> result =
      dense_data_parallel<Scalar>(set.layers, set.inputs, set.targets);

  GroupError loss;
  GroupError outputs;
  GroupError grads;
  for (std::size_t d = 0; d < dp; ++d) {
    loss.add(Vector<Scalar>::Constant(1, result.replicas[d].loss),
             Vector<Scalar>::Constant(1, set.dense_losses[d]));
    outputs.add(result.replicas[d].output, set.outputs[d]);
  }
  for (std::size_t l = 0; l < layers; ++l) {
    grads.add(result.grads[l].w1, set.dense_grads[l].w1);
    grads.add(result.grads[l].b1, set.dense_grads[l].b1);
    grads.add(result.grads[l].w2, set.dense_grads[l].w2);
    grads.add(result.grads[l].b2, set.dense_grads[l].b2);
  }
  std::printf("[ golden   ] %s %s: relative error loss %.2e, outputs %.2e, gradients %.2e\n",
              dir.filename().c_str(), sizeof(Scalar) == 4 ? "float32" : "float64",
              loss.relative(), outputs.relative(), grads.relative());
  EXPECT_LE(loss.relative(), tolerance) << dir;
  EXPECT_LE(outputs.relative(), tolerance) << dir;
  EXPECT_LE(grads.relative(), tolerance) << dir;
}

//! The project ships exactly the sets torch_reference.py's `regenerate` writes, each with
//! both dtypes: none missing (a test would then check less), none unchecked.
TEST(GoldenTest, ShipsEverySetOfTheReference) {
  std::set<fs::path> shipped;
  for (const auto& entry : fs::directory_iterator(golden_root())) shipped.insert(entry.path());
  const std::vector<fs::path> expected = testing::shipped_golden_dirs();
  EXPECT_EQ(shipped, std::set<fs::path>(expected.begin(), expected.end()));
  for (const fs::path& dir : expected) {
    const GoldenInfo info = read_golden_info(dir);
    EXPECT_TRUE(info.has_float32 && info.has_float64) << dir;
  }
}

//! float64: on every shipped set, dense losses, replica outputs and DP-averaged gradients
//! reproduce PyTorch's within 1e-12 of each group's largest magnitude.
TEST(GoldenTest, DenseFloat64MatchesPyTorch) {
  for (const fs::path& dir : testing::shipped_golden_dirs()) {
    expect_dense_matches_golden<double>(dir, 1e-12);
  }
}

//! float32: the same within 1e-5 of each group's largest magnitude.
TEST(GoldenTest, DenseFloat32MatchesPyTorch) {
  for (const fs::path& dir : testing::shipped_golden_dirs()) {
    expect_dense_matches_golden<float>(dir, 1e-5);
  }
}

//! The loader reads the hybrid run too: every rank's gradients are the TP shard of the
//! dense gradients (within the reference's tolerance), and hybrid.loss equals dense.loss.
TEST(GoldenTest, HybridGradientsAreShardsOfDenseGradients) {
  const GoldenSet<double> set = load_golden<double>(golden_dir());
  ASSERT_EQ(set.hybrid_grads.size(), 8u);
  ASSERT_EQ(set.hybrid_losses.size(), 2u);
  EXPECT_NEAR(set.hybrid_losses[1], set.dense_losses[1], 1e-12 * set.dense_losses[1]);
  const GoldenRankGrads<double>& rank5 = set.hybrid_grads[5];
  EXPECT_EQ(rank5.rank, 5);
  EXPECT_EQ(rank5.d, 1);
  EXPECT_EQ(rank5.p, 0);
  EXPECT_EQ(rank5.t, 1);
  EXPECT_EQ(rank5.layers, (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(rank5.first, 32);
  EXPECT_EQ(rank5.end, 64);
  GroupError error;
  for (const auto& rank : set.hybrid_grads) {
    for (std::size_t k = 0; k < rank.layers.size(); ++k) {
      const auto expected = shard_layer(set.dense_grads[rank.layers[k]], rank.t, set.config.tp);
      error.add(rank.grads[k].w1, expected.w1);
      error.add(rank.grads[k].b1, expected.b1);
      error.add(rank.grads[k].w2, expected.w2);
      error.add(rank.grads[k].b2, expected.b2);
    }
  }
  EXPECT_LE(error.relative(), 1e-12);
}

template <typename Scalar>
void expect_same_set(const GoldenSet<Scalar>& a, const GoldenSet<Scalar>& b) {
  EXPECT_EQ(a.config, b.config);
  ASSERT_EQ(a.layers.size(), b.layers.size());
  for (std::size_t l = 0; l < a.layers.size(); ++l) {
    EXPECT_EQ(a.layers[l].w2, b.layers[l].w2);
    EXPECT_EQ(a.dense_grads[l].b1, b.dense_grads[l].b1);
  }
  EXPECT_EQ(a.inputs, b.inputs);
  EXPECT_EQ(a.targets, b.targets);
  EXPECT_EQ(a.outputs, b.outputs);
  EXPECT_EQ(a.dense_losses, b.dense_losses);
  EXPECT_EQ(a.hybrid_losses, b.hybrid_losses);
  ASSERT_EQ(a.hybrid_grads.size(), b.hybrid_grads.size());
  for (std::size_t r = 0; r < a.hybrid_grads.size(); ++r) {
    EXPECT_EQ(a.hybrid_grads[r].layers, b.hybrid_grads[r].layers);
    EXPECT_EQ(a.hybrid_grads[r].grads.back().w2, b.hybrid_grads[r].grads.back().w2);
  }
}

//! save_golden writes the reference's names: saving both dtypes into one directory and
//! loading them back gives the same sets, and the files are byte-identical to np.save's.
TEST(GoldenTest, SaveThenLoadRoundTrips) {
  TempDir dir("golden_roundtrip");
  const GoldenSet<float> f32 = load_golden<float>(golden_dir());
  const GoldenSet<double> f64 = load_golden<double>(golden_dir());
  save_golden(dir.path(), f32);
  save_golden(dir.path(), f64);
  expect_same_set(load_golden<float>(dir.path()), f32);
  expect_same_set(load_golden<double>(dir.path()), f64);
  std::size_t count = 0;
  for (const auto& entry : fs::directory_iterator(golden_dir())) {
    if (entry.path().extension() != ".npy") continue;
    ++count;
    const fs::path copy = dir.path() / entry.path().filename();
    std::ifstream a(copy, std::ios::binary);
    std::ifstream b(entry.path(), std::ios::binary);
    const std::string ours{std::istreambuf_iterator<char>(a), std::istreambuf_iterator<char>()};
    const std::string theirs{std::istreambuf_iterator<char>(b), std::istreambuf_iterator<char>()};
    EXPECT_EQ(ours, theirs) << copy;
  }
  EXPECT_EQ(count, 208u);
}

//! A dense-only set (no expected results) saves and loads; another config in the same
//! directory is refused.
TEST(GoldenTest, PartialSetsAndConflicts) {
  TempDir dir("golden_partial");
  GoldenSet<double> set;
  set.config.dp = 1;
  set.config.shape = {1, 2, 3, 4, 1};
  set.layers = {LayerParams<double>::zeros(3, 4)};
  set.inputs = {Matrix<double>::Ones(2, 3)};
  set.targets = {Matrix<double>::Zero(2, 3)};
  save_golden(dir.path(), set);
  const GoldenSet<double> back = load_golden<double>(dir.path());
  EXPECT_EQ(back.inputs, set.inputs);
  EXPECT_TRUE(back.outputs.empty());
  EXPECT_TRUE(back.dense_grads.empty());
  EXPECT_TRUE(back.hybrid_grads.empty());
  EXPECT_THROW_MSG(load_golden<float>(dir.path()), TraceError,
                   "manifest.json: the set holds no float32 data");

  GoldenSet<double> other = set;
  other.config.seed = 3;
  EXPECT_THROW_MSG(save_golden(dir.path(), other), TraceError,
                   "manifest.json: holds a set of another configuration");
  other = set;
  other.inputs.clear();
  EXPECT_THROW_MSG(save_golden(dir.path() / "x", other), UsageError,
                   "save_golden: the number of replicas disagrees with the config");
}

//! Missing directories, manifests and files, and bad manifests, are reported with the path.
TEST(GoldenTest, MissingPiecesNameThePath) {
  TempDir dir("golden_missing");
  EXPECT_THROW_MSG(load_golden<double>(dir.path() / "nowhere"), TraceError,
                   "nowhere: no such directory");
  EXPECT_THROW_MSG(load_golden<double>(dir.path()), TraceError,
                   "manifest.json: no such file (not a golden directory?)");
  std::ofstream(dir.path() / "manifest.json") << "{\"config\": [1, 2";
  EXPECT_THROW_MSG(load_golden<double>(dir.path()), TraceError, "manifest.json: invalid JSON");
  std::ofstream(dir.path() / "manifest.json") << R"({"config": {"tp": 1, "pp": 1}})";
  EXPECT_THROW_MSG(load_golden<double>(dir.path()), TraceError,
                   "manifest.json: manifest has no 'config.dp'");

  GoldenSet<double> set;
  set.config.shape = {1, 2, 3, 4, 2};
  set.layers = {LayerParams<double>::zeros(3, 4), LayerParams<double>::zeros(3, 4)};
  set.inputs = {Matrix<double>::Ones(2, 3)};
  set.targets = {Matrix<double>::Zero(2, 3)};
  fs::remove(dir.path() / "manifest.json");
  save_golden(dir.path(), set);
  fs::remove(dir.path() / "layer1.b2.f64.npy");
  EXPECT_THROW_MSG(load_golden<double>(dir.path()), TraceError, "layer1.b2.f64.npy: no such file");
}

}  // namespace
}  // namespace ranklab
