#include "model/parallel_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "traces/error.hpp"

namespace ranklab {

void ErrorStat::throw_shape_mismatch(std::int64_t rows, std::int64_t cols,
                                     std::int64_t expected_rows, std::int64_t expected_cols) {
  throw UsageError(fmt::format("comparing a [{}, {}] tensor with a [{}, {}] one", rows, cols,
                               expected_rows, expected_cols));
}

void ErrorStat::add_scalar(double computed, double expected) {
  compared = true;
  max_abs = std::max(max_abs, std::abs(computed - expected));
  scale = std::max(scale, std::abs(expected));
}

void ErrorStat::merge(const ErrorStat& other) {
  if (!other.compared) return;
  compared = true;
  max_abs = std::max(max_abs, other.max_abs);
  scale = std::max(scale, other.scale);
}

double RankCheck::max_abs() const {
  double out = std::max({loss.max_abs, output.max_abs, grads.max_abs});
  return golden ? std::max(out, golden->max_abs) : out;
}

double RankCheck::max_relative() const {
  double out = std::max({loss.relative(), output.relative(), grads.relative()});
  return golden ? std::max(out, golden->relative()) : out;
}

bool RankCheck::ok(double tolerance) const {
  return loss.within(tolerance) && output.within(tolerance) && grads.within(tolerance) &&
         (!golden || golden->within(tolerance));
}

template <typename Scalar>
DenseReference<Scalar> compute_dense_reference(const Problem<Scalar>& problem) {
  DenseReference<Scalar> out;
  StackCache<Scalar> cache;
  dense_data_parallel<Scalar>(problem.layers, problem.inputs, problem.targets, cache, out.result);
  // A second forward keeps every layer's output (dense_data_parallel reuses one cache).
  for (const Matrix<Scalar>& inputs : problem.inputs) {
    dense_forward<Scalar>(problem.layers, inputs, cache);
    std::vector<Matrix<Scalar>> layers(cache.inputs.begin() + 1, cache.inputs.end());
    layers.push_back(cache.output);
    out.activations.push_back(std::move(layers));
  }
  return out;
}

template <typename Scalar>
RankCheck check_rank(const RankResult<Scalar>& result, const ParallelConfig& config,
                     const DenseReference<Scalar>& reference) {
  RankCheck check{.rank = result.rank, .coords = result.coords, .stage = result.stage};
  const Coords& c = result.coords;
  const auto d = static_cast<std::size_t>(c.d);
  if (d >= reference.activations.size() ||
      result.grads.size() != static_cast<std::size_t>(result.stage.count()) ||
      result.stage.end > static_cast<std::int64_t>(reference.result.grads.size())) {
    throw UsageError(
        fmt::format("rank {}: result of replica {} with {} gradients for layers "
                    "[{}, {}) does not fit the reference",
                    result.rank, c.d, result.grads.size(), result.stage.first, result.stage.end));
  }
  const auto last_layer = static_cast<std::size_t>(result.stage.end - 1);
  check.output.add(result.output, reference.activations[d][last_layer]);
  if (result.loss) check.loss.add_scalar(*result.loss, reference.result.replicas[d].loss);
  for (std::int64_t l = result.stage.first; l < result.stage.end; ++l) {
    const LayerGrads<Scalar> expected =
        shard_layer(reference.result.grads[static_cast<std::size_t>(l)], c.t, config.tp);
    const LayerGrads<Scalar>& got = result.grads[static_cast<std::size_t>(l - result.stage.first)];
    check.grads.add(got.w1, expected.w1);
    check.grads.add(got.b1, expected.b1);
    check.grads.add(got.w2, expected.w2);
    check.grads.add(got.b2, expected.b2);
  }
  return check;
}

#define RANKLAB_INSTANTIATE_CHECK(Scalar)                                                  \
  template DenseReference<Scalar> compute_dense_reference<Scalar>(const Problem<Scalar>&); \
  template RankCheck check_rank<Scalar>(const RankResult<Scalar>&, const ParallelConfig&,  \
                                        const DenseReference<Scalar>&);

RANKLAB_INSTANTIATE_CHECK(float)
RANKLAB_INSTANTIATE_CHECK(double)

#undef RANKLAB_INSTANTIATE_CHECK

}  // namespace ranklab
