#include "model/dense_training.hpp"

#include <fmt/format.h>

#include <chrono>
#include <stdexcept>

#include "model/training.hpp"
#include "traces/error.hpp"

namespace ranklab {

template <typename Scalar>
DenseTrajectory<Scalar>::DenseTrajectory(Problem<Scalar> problem, double lr, int consumers)
    : problem_(std::move(problem)), lr_(static_cast<Scalar>(lr)), consumers_(consumers) {}

template <typename Scalar>
std::shared_ptr<const DenseTrainingStep<Scalar>> DenseTrajectory<Scalar>::at(int step) {
  const std::lock_guard lock(mutex_);
  if (step < next_ && !held_.contains(step)) {
    throw std::logic_error(
        fmt::format("dense trajectory: step {} was already handed to all {} consumers", step,
                    consumers_));
  }
  const auto start = std::chrono::steady_clock::now();
  for (; next_ <= step; ++next_) {
    auto computed = std::make_shared<DenseTrainingStep<Scalar>>();
    computed->weights = problem_.layers;
    computed->reference = compute_dense_reference(problem_);
    for (std::size_t l = 0; l < problem_.layers.size(); ++l) {
      sgd_update(problem_.layers[l], computed->reference.result.grads[l], lr_);
    }
    computed->updated = problem_.layers;
    held_[next_].step = std::move(computed);
  }
  ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
             .count();
  const auto it = held_.find(step);
  std::shared_ptr<const DenseTrainingStep<Scalar>> out = it->second.step;
  if (++it->second.handed == consumers_) held_.erase(it);
  return out;
}

template <typename Scalar>
double DenseTrajectory<Scalar>::ms() const {
  const std::lock_guard lock(mutex_);
  return ms_;
}

template <typename Scalar>
ErrorStat check_updated_weights(const std::vector<LayerParams<Scalar>>& updated,
                                const RankResult<Scalar>& result, const ParallelConfig& config,
                                const std::vector<LayerParams<Scalar>>& dense_updated) {
  if (updated.size() != result.layers.size()) {
    throw UsageError(fmt::format("rank {}: {} updated layers for {} layers held", result.rank,
                                 updated.size(), result.layers.size()));
  }
  ErrorStat stat;
  for (std::size_t k = 0; k < updated.size(); ++k) {
    const auto l = static_cast<std::size_t>(result.layers[k]);
    if (l >= dense_updated.size()) {
      throw UsageError(fmt::format("rank {}: layer {} of a model of {}", result.rank, l,
                                   dense_updated.size()));
    }
    const LayerParams<Scalar> expected = shard_layer(dense_updated[l], result.coords.t, config.tp);
    stat.add(updated[k].w1, expected.w1);
    stat.add(updated[k].b1, expected.b1);
    stat.add(updated[k].w2, expected.w2);
    stat.add(updated[k].b2, expected.b2);
  }
  return stat;
}

template class DenseTrajectory<float>;
template class DenseTrajectory<double>;
template ErrorStat check_updated_weights<float>(const std::vector<LayerParams<float>>&,
                                                const RankResult<float>&, const ParallelConfig&,
                                                const std::vector<LayerParams<float>>&);
template ErrorStat check_updated_weights<double>(const std::vector<LayerParams<double>>&,
                                                 const RankResult<double>&, const ParallelConfig&,
                                                 const std::vector<LayerParams<double>>&);

}  // namespace ranklab
