#include "model/problem.hpp"

#include <fmt/format.h>

#include "model/init.hpp"
#include "traces/enum_names.hpp"
#include "traces/error.hpp"

namespace ranklab {

namespace {

constexpr EnumNames<ParallelMode, 4> kModeNames({"tp", "pp", "dp", "hybrid"});

}  // namespace

std::string_view to_string(ParallelMode mode) { return kModeNames[mode]; }

ParallelMode parse_parallel_mode(std::string_view text) {
  if (const auto mode = kModeNames.parse(text)) return *mode;
  throw UsageError(fmt::format("unknown mode '{}': expected {}", text, kModeNames.alternatives()));
}

ParallelConfig mode_config(ParallelMode mode, const ParallelConfig& requested) {
  ParallelConfig out = requested;
  switch (mode) {
    case ParallelMode::tp:
      out.pp = out.dp = 1;
      break;
    case ParallelMode::pp:
      out.tp = out.dp = 1;
      break;
    case ParallelMode::dp:
      out.tp = out.pp = 1;
      break;
    case ParallelMode::hybrid:
      break;
  }
  return out;
}

ModelShape mode_shape(ParallelMode mode, const ModelShape& shape) {
  ModelShape out = shape;
  // The seed's TP test is one layer (layer 0) with no copy-to-TP region.
  if (mode == ParallelMode::tp) out.layers = 1;
  return out;
}

template <typename Scalar>
Problem<Scalar> make_problem(const ModelShape& shape, int replicas, std::uint64_t seed) {
  if (replicas < 1) throw UsageError(fmt::format("a problem needs a replica, got {}", replicas));
  Problem<Scalar> out{.shape = shape, .seed = seed, .layers = default_layers<Scalar>(shape, seed)};
  for (int d = 0; d < replicas; ++d) {
    const auto replica = static_cast<std::uint64_t>(d);
    out.inputs.push_back(default_inputs<Scalar>(shape, replica, seed));
    out.targets.push_back(default_targets<Scalar>(shape, replica, seed));
  }
  return out;
}

template <typename Scalar>
Problem<Scalar> problem_from_golden(const GoldenSet<Scalar>& set) {
  return {.shape = set.config.shape,
          .seed = set.config.seed,
          .layers = set.layers,
          .inputs = set.inputs,
          .targets = set.targets};
}

template <typename Scalar>
Problem<Scalar> mode_problem(ParallelMode mode, const ParallelConfig& layout,
                             const Problem<Scalar>& problem) {
  const ModelShape shape = mode_shape(mode, problem.shape);
  const int replicas = (mode == ParallelMode::tp || mode == ParallelMode::pp) ? 1 : layout.dp;
  if (problem.replicas() < replicas) {
    throw UsageError(fmt::format("DP={} needs {} replicas of data, the problem has {}", layout.dp,
                                 replicas, problem.replicas()));
  }
  const auto layer_count = static_cast<std::size_t>(shape.layers);
  const auto replica_count = static_cast<std::size_t>(replicas);
  return {.shape = shape,
          .seed = problem.seed,
          .layers = {problem.layers.begin(), problem.layers.begin() + layer_count},
          .inputs = {problem.inputs.begin(), problem.inputs.begin() + replica_count},
          .targets = {problem.targets.begin(), problem.targets.begin() + replica_count}};
}

#define RANKLAB_INSTANTIATE_PROBLEM(Scalar)                                             \
  template Problem<Scalar> make_problem<Scalar>(const ModelShape&, int, std::uint64_t); \
  template Problem<Scalar> problem_from_golden<Scalar>(const GoldenSet<Scalar>&);       \
  template Problem<Scalar> mode_problem<Scalar>(ParallelMode, const ParallelConfig&,    \
                                                const Problem<Scalar>&);

RANKLAB_INSTANTIATE_PROBLEM(float)
RANKLAB_INSTANTIATE_PROBLEM(double)

#undef RANKLAB_INSTANTIATE_PROBLEM

}  // namespace ranklab
