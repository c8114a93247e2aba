// The seed's hybrid training step (TP2 PP2 DP2, B8 S16 H32 I64 L4, float32: forward,
// backward, DP gradient averaging) on an 8-rank cluster, timed as
// shared/reference/torch/parallel_reference.py times PyTorch's (`timed_steps`): barrier,
// step, barrier, per sample. Each rank sets its step up once (groups, its TP shards of its
// stage's layers, the schedule), runs kWarmup steps, then one step and one barrier per
// benchmark iteration; rank 0's iterations are Google Benchmark's timed loop (as in
// emulator_bench.cpp). So a figure is one step of a running cluster, barrier to barrier.
//
// Arguments: `threads` (worker OS threads) and `trace`: 0 no trace sink, 1 a MemorySink,
// which is what `ranklab run` records into (its --trace FILE sink keeps the events in memory
// the same way and writes the file once, when the run ends). 1 against 0 is issue 8's "trace
// recording on vs off". bench/compare runs this beside PyTorch; bench/RESULTS.md has the
// figures. The counter `faults` is the process's minor page faults per step (first touches
// of fresh memory, which a recorded trace grows by: 248 bytes an event).
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cstdint>
#include <memory>

#include "collectives/cluster.hpp"
#include "bench/seed_step.hpp"
#include "traces/sink.hpp"

namespace ranklab::bench {
namespace {

constexpr int kWarmup = 3;  // as the reference's --warmup default

long minor_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

void BM_SeedStep(benchmark::State& state) {
  const bool trace = state.range(1) != 0;
  static const Problem<float> problem = make_problem<float>(ModelShape{}, kSeedLayout.dp);
  ClusterOptions options;
  options.world_size = kSeedLayout.world_size();
  options.threads = static_cast<int>(state.range(0));
  if (trace) options.trace_sink = std::make_shared<MemorySink>();
  const benchmark::IterationCount iterations = state.max_iterations;
  long faults = 0;

  Cluster cluster(options);
  const RunReport report = cluster.run([&](Communicator& world) {
    SeedStep seed_step(world, problem);
    auto step = [&] {
      seed_step();
      world.barrier();
    };
    for (int i = 0; i < kWarmup; ++i) step();
    if (world.rank() == 0) {
      faults = minor_faults();
      for (auto _ : state) step();
      faults = minor_faults() - faults;
    } else {
      for (benchmark::IterationCount i = 0; i < iterations; ++i) step();
    }
  });
  if (!report.ok()) state.SkipWithError(report.summary.c_str());
  state.SetLabel(trace ? "trace on" : "trace off");
  state.counters["faults"] =
      benchmark::Counter(static_cast<double>(faults), benchmark::Counter::kAvgIterations);
}

BENCHMARK(BM_SeedStep)
    ->ArgNames({"threads", "trace"})
    ->ArgsProduct({{1, 2}, {0, 1}})
    ->UseRealTime();

}  // namespace
}  // namespace ranklab::bench

BENCHMARK_MAIN();
