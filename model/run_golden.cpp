#include "model/run_golden.hpp"

#include "traces/error.hpp"

namespace ranklab {

namespace {

template <typename Scalar>
void add_layer(ErrorStat& stat, const LayerGrads<Scalar>& got, const LayerGrads<Scalar>& want) {
  stat.add(got.w1, want.w1);
  stat.add(got.b1, want.b1);
  stat.add(got.w2, want.w2);
  stat.add(got.b2, want.b2);
}

// The reference's numbering, whatever order the run used.
int reference_rank(const ParallelConfig& config, const Coords& coords) {
  ParallelConfig seed_order = config;
  seed_order.order = RankOrder::tp_pp_dp;
  return seed_order.rank_of(coords);
}

}  // namespace

template <typename Scalar>
GoldenSet<Scalar> make_golden_set(const Problem<Scalar>& problem, const ParallelConfig& config,
                                  const DenseReference<Scalar>& reference,
                                  const std::vector<RankResult<Scalar>>& results) {
  GoldenSet<Scalar> set{.config = {.tp = config.tp,
                                   .pp = config.pp,
                                   .dp = config.dp,
                                   .shape = problem.shape,
                                   .seed = problem.seed},
                        .layers = problem.layers,
                        .inputs = problem.inputs,
                        .targets = problem.targets,
                        .dense_grads = reference.result.grads};
  for (const ReplicaResult<Scalar>& replica : reference.result.replicas) {
    set.outputs.push_back(replica.output);
    set.dense_losses.push_back(replica.loss);
  }
  set.hybrid_losses.assign(static_cast<std::size_t>(config.dp), Scalar(0));
  set.hybrid_grads.resize(results.size());
  const std::int64_t local = problem.shape.inter / config.tp;
  for (const RankResult<Scalar>& r : results) {
    const Coords& c = r.coords;
    if (r.loss && c.t == 0) set.hybrid_losses[static_cast<std::size_t>(c.d)] = *r.loss;
    GoldenRankGrads<Scalar>& out =
        set.hybrid_grads.at(static_cast<std::size_t>(reference_rank(config, c)));
    out = {.rank = reference_rank(config, c),
           .d = c.d,
           .p = c.p,
           .t = c.t,
           .first = c.t * local,
           .end = (c.t + 1) * local,
           .grads = r.grads};
    out.layers = r.layers;
  }
  return set;
}

template <typename Scalar>
std::optional<ErrorStat> compare_rank_with_golden(const RankResult<Scalar>& result,
                                                  const GoldenSet<Scalar>& golden) {
  for (const GoldenRankGrads<Scalar>& g : golden.hybrid_grads) {
    if (g.d != result.coords.d || g.p != result.coords.p || g.t != result.coords.t) continue;
    if (g.grads.size() != result.grads.size() || g.layers != result.layers ||
        g.grads.front().inter() != result.grads.front().inter()) {
      return std::nullopt;  // same coordinates, another layout
    }
    ErrorStat stat;
    for (std::size_t k = 0; k < g.grads.size(); ++k) add_layer(stat, result.grads[k], g.grads[k]);
    return stat;
  }
  return std::nullopt;
}

template <typename Scalar>
std::optional<DenseGoldenCheck> compare_dense_with_golden(const DenseReference<Scalar>& reference,
                                                          const GoldenSet<Scalar>& golden) {
  const DataParallelResult<Scalar>& dense = reference.result;
  if (golden.dense_grads.size() != dense.grads.size() ||
      golden.dense_losses.size() != dense.replicas.size() ||
      golden.outputs.size() != dense.replicas.size()) {
    return std::nullopt;
  }
  DenseGoldenCheck out;
  for (std::size_t d = 0; d < dense.replicas.size(); ++d) {
    out.loss.add_scalar(dense.replicas[d].loss, golden.dense_losses[d]);
    out.output.add(dense.replicas[d].output, golden.outputs[d]);
  }
  for (std::size_t l = 0; l < dense.grads.size(); ++l) {
    add_layer(out.grads, dense.grads[l], golden.dense_grads[l]);
  }
  return out;
}

#define RANKLAB_INSTANTIATE_RUN_GOLDEN(Scalar)                                                  \
  template GoldenSet<Scalar> make_golden_set<Scalar>(                                           \
      const Problem<Scalar>&, const ParallelConfig&, const DenseReference<Scalar>&,             \
      const std::vector<RankResult<Scalar>>&);                                                  \
  template std::optional<ErrorStat> compare_rank_with_golden<Scalar>(const RankResult<Scalar>&, \
                                                                     const GoldenSet<Scalar>&); \
  template std::optional<DenseGoldenCheck> compare_dense_with_golden<Scalar>(                   \
      const DenseReference<Scalar>&, const GoldenSet<Scalar>&);

RANKLAB_INSTANTIATE_RUN_GOLDEN(float)
RANKLAB_INSTANTIATE_RUN_GOLDEN(double)

#undef RANKLAB_INSTANTIATE_RUN_GOLDEN

}  // namespace ranklab
