#include "model/parallel_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "model/sequence_parallel.hpp"
#include "traces/error.hpp"

namespace ranklab {

void ErrorStat::throw_shape_mismatch(std::int64_t rows, std::int64_t cols,
                                     std::int64_t expected_rows, std::int64_t expected_cols) {
  throw UsageError(fmt::format("comparing a [{}, {}] tensor with a [{}, {}] one", rows, cols,
                               expected_rows, expected_cols));
}

void ErrorStat::add_scalar(double computed, double expected) {
  compared = true;
  max_abs = worse_error(max_abs, std::abs(computed - expected));
  scale = worse_error(scale, std::abs(expected));
}

void ErrorStat::merge(const ErrorStat& other) {
  if (!other.compared) return;
  compared = true;
  max_abs = worse_error(max_abs, other.max_abs);
  scale = worse_error(scale, other.scale);
}

double RankCheck::max_abs() const {
  double out = worse_error(worse_error(loss.max_abs, output.max_abs), grads.max_abs);
  if (golden) out = worse_error(out, golden->max_abs);
  return weights ? worse_error(out, weights->max_abs) : out;
}

double RankCheck::max_relative() const {
  double out = worse_error(worse_error(loss.relative(), output.relative()), grads.relative());
  if (golden) out = worse_error(out, golden->relative());
  return weights ? worse_error(out, weights->relative()) : out;
}

bool RankCheck::ok(double tolerance) const {
  return loss.within(tolerance) && output.within(tolerance) && grads.within(tolerance) &&
         (!golden || golden->within(tolerance)) && (!weights || weights->within(tolerance));
}

template <typename Scalar>
DenseReference<Scalar> compute_dense_reference(const Problem<Scalar>& problem) {
  DenseReference<Scalar> out{.shape = problem.shape};
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
  RankCheck check{.rank = result.rank, .coords = result.coords, .layers = result.layers};
  const Coords& c = result.coords;
  const auto d = static_cast<std::size_t>(c.d);
  const auto layer_count = static_cast<std::int64_t>(reference.result.grads.size());
  if (d >= reference.activations.size() || result.layers.empty() ||
      result.grads.size() != result.layers.size() ||
      !std::all_of(result.layers.begin(), result.layers.end(),
                   [&](std::int64_t l) { return l >= 0 && l < layer_count; })) {
    throw UsageError(fmt::format(
        "rank {}: result of replica {} with {} gradients for {} layers does not fit the "
        "reference of {} layers",
        result.rank, c.d, result.grads.size(), result.layers.size(), layer_count));
  }
  const Matrix<Scalar>& after_stage =
      reference.activations[d][static_cast<std::size_t>(result.layers.back())];
  if (result.output_is_sequence_shard) {
    const SequenceSplit split{.seq = reference.shape.seq, .tp = config.tp};
    check.output.add(result.output, sequence_shard<Scalar>(after_stage, split, c.t));
  } else {
    check.output.add(result.output, after_stage);
  }
  if (result.loss) check.loss.add_scalar(*result.loss, reference.result.replicas[d].loss);
  for (std::size_t k = 0; k < result.layers.size(); ++k) {
    const LayerGrads<Scalar> expected = shard_layer(
        reference.result.grads[static_cast<std::size_t>(result.layers[k])], c.t, config.tp);
    const LayerGrads<Scalar>& got = result.grads[k];
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
