// What recording call sites costs (issue 15 §1): the seed's hybrid step (as step_bench.cpp
// runs it: TP2 PP2 DP2 on 8 ranks, barrier to barrier) and a small all_reduce (8 ranks, 16
// floats, native and ring), each with call sites on and off (ClusterOptions::call_sites),
// trace on (a MemorySink, which keeps a copy of every event, its site's strings included)
// and, for the all_reduce, off (sites are then kept only in the report's recent events). Off still passes the
// std::source_location down the funnel (a pointer), so "on / off" is what recording adds:
// the site copied into each operation and turned into the event's strings.
// `bench/site_bench --benchmark_format=json | python3 bench/site_ratios.py` prints the
// ratios of one run; bench/RESULTS.md has the figures.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "collectives/cluster.hpp"
#include "model/parallel_step.hpp"
#include "model/pipeline_step.hpp"
#include "model/problem.hpp"
#include "model/schedule_builders.hpp"
#include "traces/sink.hpp"

namespace ranklab::bench {
namespace {

constexpr int kWarmup = 3;
constexpr ParallelConfig kSeedLayout{.tp = 2, .pp = 2, .dp = 2};

ClusterOptions options_for(int world, bool sites, bool trace = true) {
  ClusterOptions options;
  options.world_size = world;
  options.call_sites = sites;
  if (trace) options.trace_sink = std::make_shared<MemorySink>();
  return options;
}

// Runs `iteration` kWarmup times, then as rank 0's timed loop (the other ranks run as many).
template <typename Setup>
void run_timed(benchmark::State& state, const ClusterOptions& options, Setup setup) {
  const benchmark::IterationCount iterations = state.max_iterations;
  Cluster cluster(options);
  const RunReport report = cluster.run([&](Communicator& world) {
    auto iteration = setup(world);
    for (int i = 0; i < kWarmup; ++i) iteration();
    if (world.rank() == 0) {
      for (auto _ : state) iteration();
    } else {
      for (benchmark::IterationCount i = 0; i < iterations; ++i) iteration();
    }
  });
  if (!report.ok()) state.SkipWithError(report.summary.c_str());
  state.SetLabel(options.call_sites ? "sites on" : "sites off");
}

void BM_SeedStep(benchmark::State& state) {
  static const Problem<float> problem = make_problem<float>(ModelShape{}, kSeedLayout.dp);
  run_timed(state, options_for(kSeedLayout.world_size(), state.range(0) != 0),
            [&](Communicator& world) {
              auto layout = std::make_shared<ParallelLayout>(world, kSeedLayout);
              const Coords& c = layout->coords();
              const StepOptions step_options;
              auto chunks = std::make_shared<std::vector<std::vector<LayerParams<float>>>>(
                  shard_stage<float>(problem.layers, kSeedLayout, 1, c));
              auto schedule = std::make_shared<Schedule>(
                  build_schedule(step_options.schedule_spec(kSeedLayout.pp)));
              auto out = std::make_shared<RankResult<float>>();
              const auto d = static_cast<std::size_t>(c.d);
              return [&world, layout, chunks, schedule, out, d, step_options] {
                pipeline_step<float>(*layout, *schedule, step_options.tp_comm,
                                     problem.shape.seq, *chunks, problem.inputs[d],
                                     problem.targets[d], *out);
                world.barrier();
              };
            });
}

void BM_SmallAllReduce(benchmark::State& state) {
  const auto algorithm = state.range(1) == 0 ? Algorithm::direct : Algorithm::ring;
  run_timed(state, options_for(8, state.range(0) != 0, state.range(2) != 0),
            [algorithm](Communicator& world) {
    auto data = std::make_shared<std::vector<float>>(16, 1.0f);
    return [&world, data, algorithm] {
      world.all_reduce(std::span<float>(*data), {.algorithm = algorithm});
    };
  });
}

BENCHMARK(BM_SeedStep)->ArgNames({"sites"})->Arg(0)->Arg(1)->UseRealTime();
BENCHMARK(BM_SmallAllReduce)
    ->ArgNames({"sites", "ring", "trace"})
    ->ArgsProduct({{0, 1}, {0, 1}, {0, 1}})
    ->UseRealTime();

}  // namespace
}  // namespace ranklab::bench

BENCHMARK_MAIN();
