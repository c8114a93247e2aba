// Latency of the emulator's operations, each measured INSIDE one running cluster.
//
// How a figure is taken: every rank of one cluster run builds its step (a ping-pong, a ring
// lap, a barrier, an all_reduce), runs it kWarmup times, meets the others at a barrier, and
// then runs it `state.max_iterations` times. Rank 0's steps ARE Google Benchmark's timed
// loop: `for (auto _ : state)` runs inside rank 0's fiber, and the other ranks run the same
// number of steps. So the time reported is per operation in a cluster that is already up
// (no start-up, no hand-made division), and Google Benchmark still picks the iteration count
// and does the repetitions. Start-up is measured on its own (BM_ClusterStartup).
//
// Arguments, by name in the output: `threads` (the cluster's worker OS threads), `count`
// (floats per message or per collective), `world` (ranks) where it varies.
// Counters: `per_msg` (ping-pong: round trip / 2), `per_hop` (ring: lap / world).
//
//   emulator_bench --benchmark_repetitions=5 --benchmark_display_aggregates_only=true
//                  --benchmark_out=bench.json --benchmark_out_format=json
//   bench/summarize.py bench.json      # median (min-max) per benchmark, as in RESULTS.md
//
// bench/RESULTS.md has the figures, the machine and the peers' numbers beside them.
// CPU time is that of rank 0's worker thread: with threads=1, what the whole cluster spent.
// Per-algorithm figures (collectives issue, §5): BM_AllReduce runs every all_reduce algorithm
// in kAllReduceAlgorithms at 8 ranks for 4 B, 4 KiB, 4 MiB and 64 MiB per rank, BM_Broadcast
// and BM_Reduce run direct and tree (the rooted collectives tree implements), and BM_Memcpy of
// p x bytes is the memory bound beside them. To add an algorithm, add it to the array: every
// size and thread count is registered for it.
#include <benchmark/benchmark.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <boost/fiber/context.hpp>
#include <boost/fiber/fiber.hpp>

#include "collectives/cluster.hpp"
#include "emulator/engine.hpp"
#include "emulator/rank.hpp"

namespace ranklab::bench {
namespace {

constexpr int kWarmup = 16;      // untimed steps per rank before the timed loop
constexpr int kWarmupLarge = 1;  // the same for steps that move megabytes (0.1-1 s each)
constexpr std::int64_t kLargeBytes = 4 << 20;
constexpr int kPingPongTag = 1;  // user tags: below collectives' reserved range
constexpr int kRingTag = 7;      // as in ../shared/bench/mpi/allreduce_bench.c

ClusterOptions cluster_options(std::int64_t world, std::int64_t threads) {
  ClusterOptions options;
  options.world_size = static_cast<int>(world);
  options.threads = static_cast<int>(threads);
  return options;
}

/// One rank's part of a benchmark: runs `step` `warmup` times, meets the others through
/// `barrier`, then runs it once per benchmark iteration; rank 0's iterations are the timed
/// loop.
template <typename Step, typename Barrier>
void run_rank_steps(benchmark::State& state, benchmark::IterationCount iterations, int rank,
                    int warmup, Step& step, Barrier barrier) {
  for (int i = 0; i < warmup; ++i) step();
  barrier();
  if (rank == 0) {
    for (auto _ : state) step();
  } else {
    for (benchmark::IterationCount i = 0; i < iterations; ++i) step();
  }
}

/// Runs one cluster of `options.world_size` ranks through the Communicator. Each rank calls
/// `make_step(comm)` once to build its step (buffers are allocated there, outside the
/// timing), then run_rank_steps. A failed run is reported as the benchmark's error (the
/// state loop may then have stopped early, which SkipWithError allows).
template <typename MakeStep>
void run_steps(benchmark::State& state, const ClusterOptions& options, Algorithm algorithm,
               MakeStep make_step, int warmup = kWarmup) {
  const benchmark::IterationCount iterations = state.max_iterations;
  Cluster cluster(options, algorithm);
  const RunReport report = cluster.run([&](Communicator& comm) {
    auto step = make_step(comm);
    run_rank_steps(state, iterations, comm.rank(), warmup, step, [&comm] { comm.barrier(); });
  });
  if (!report.ok()) state.SkipWithError(report.summary.c_str());
}

/// The same on the fabric directly (the emulator's RankContext, below the Communicator):
/// `make_step(context)` builds the step.
template <typename MakeStep>
void run_raw_steps(benchmark::State& state, const ClusterOptions& options, MakeStep make_step) {
  const benchmark::IterationCount iterations = state.max_iterations;
  Engine engine(options);
  const RunReport report = engine.run([&](RankContext& context) {
    auto step = make_step(context);
    run_rank_steps(state, iterations, context.rank(), kWarmup, step,
                   [&context] { context.barrier(context.world()); });
  });
  if (!report.ok()) state.SkipWithError(report.summary.c_str());
}

// ---------------------------------------------------------------------------------------
// Point-to-point

/// Two ranks, one float bounced back and forth with blocking send/recv through the
/// Communicator. Time: one round trip (two messages, each a rendezvous). The third argument
/// turns ClusterOptions::pin_threads off (0) or on (1): with 2 threads, each rank is on its
/// own worker, so every message crosses threads (RESULTS.md, finding 6).
void BM_PingPong(benchmark::State& state) {
  const auto count = static_cast<std::size_t>(state.range(1));
  ClusterOptions options = cluster_options(2, state.range(0));
  options.pin_threads = state.range(2) != 0;
  run_steps(state, options, Algorithm::direct, [count](Communicator& comm) {
    return [&comm, buf = std::vector<float>(count, 1.0f)]() mutable {
      const std::span<float> data(buf);
      if (comm.rank() == 0) {
        comm.send(std::span<const float>(data), 1, kPingPongTag);
        comm.recv(data, 1, kPingPongTag);
      } else {
        comm.recv(data, 0, kPingPongTag);
        comm.send(std::span<const float>(data), 0, kPingPongTag);
      }
    };
  });
  state.counters["per_msg"] = benchmark::Counter(
      2, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

/// The same ping-pong on the fabric directly (RankContext), without the Communicator's
/// funnel: the difference between the two is the API's own cost.
void BM_PingPongRaw(benchmark::State& state) {
  const auto count = static_cast<std::size_t>(state.range(1));
  run_raw_steps(state, cluster_options(2, state.range(0)), [count](RankContext& context) {
    return [&context, buf = std::vector<float>(count, 1.0f)]() mutable {
      const Group& world = context.world();
      const MutableBuffer data = as_mutable_buffer(std::span<float>(buf));
      if (context.rank() == 0) {
        context.send(world, data, 1, kPingPongTag);
        context.recv(world, data, 1, kPingPongTag);
      } else {
        context.recv(world, data, 0, kPingPongTag);
        context.send(world, data, 0, kPingPongTag);
      }
    };
  });
  state.counters["per_msg"] = benchmark::Counter(
      2, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

/// The peers' ring: a token of one float goes 0 -> 1 -> ... -> N-1 -> 0 with blocking
/// send/recv. Time: one lap (N hops); `per_hop` is the figure the peers report.
void BM_RingLap(benchmark::State& state) {
  const std::int64_t world = state.range(1);
  run_steps(state, cluster_options(world, state.range(0)), Algorithm::direct,
            [](Communicator& comm) {
              return [&comm, token = 1.0f]() mutable {
                const int n = comm.size(), me = comm.rank();
                const std::span<float> data(&token, 1);
                if (me == 0) {
                  comm.send(std::span<const float>(data), (me + 1) % n, kRingTag);
                  comm.recv(data, (me + n - 1) % n, kRingTag);
                } else {
                  comm.recv(data, (me + n - 1) % n, kRingTag);
                  comm.send(std::span<const float>(data), (me + 1) % n, kRingTag);
                }
              };
            });
  state.counters["per_hop"] =
      benchmark::Counter(static_cast<double>(world), benchmark::Counter::kIsIterationInvariantRate |
                                                         benchmark::Counter::kInvert);
}

// ---------------------------------------------------------------------------------------
// Collectives

void BM_Barrier(benchmark::State& state) {
  run_steps(state, cluster_options(state.range(1), state.range(0)), Algorithm::direct,
            [](Communicator& comm) { return [&comm] { comm.barrier(); }; });
}

/// all_reduce (sum) of `count` floats per rank through the Communicator, with the
/// algorithm given as the fourth argument (an index into kAllReduceAlgorithms). Tree does
/// not implement all_reduce here (a reduce then a broadcast would be two collectives): it is
/// measured on broadcast and reduce below.
constexpr std::array kAllReduceAlgorithms = {
    Algorithm::direct, Algorithm::ring, Algorithm::recursive_doubling, Algorithm::halving_doubling};
constexpr std::array kRootedAlgorithms = {Algorithm::direct, Algorithm::tree};

int warmup_for(std::size_t count) {
  return static_cast<std::int64_t>(count * sizeof(float)) >= kLargeBytes ? kWarmupLarge : kWarmup;
}

void BM_AllReduce(benchmark::State& state) {
  const auto count = static_cast<std::size_t>(state.range(1));
  const Algorithm algorithm = kAllReduceAlgorithms[static_cast<std::size_t>(state.range(3))];
  state.SetLabel(std::string(to_string(algorithm)));
  run_steps(
      state, cluster_options(state.range(2), state.range(0)), algorithm,
      [count](Communicator& comm) {
        return [&comm, buf = std::vector<float>(count, 1.0f)]() mutable {
          comm.all_reduce(std::span<float>(buf));
        };
      },
      warmup_for(count));
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(count * sizeof(float)));
}

/// broadcast or reduce (sum) from root 0 of `count` floats per rank, with the algorithm
/// given as the fourth argument (an index into kRootedAlgorithms).
template <bool kReduce>
void BM_Rooted(benchmark::State& state) {
  const auto count = static_cast<std::size_t>(state.range(1));
  const Algorithm algorithm = kRootedAlgorithms[static_cast<std::size_t>(state.range(3))];
  state.SetLabel(std::string(to_string(algorithm)));
  run_steps(
      state, cluster_options(state.range(2), state.range(0)), algorithm,
      [count](Communicator& comm) {
        return [&comm, buf = std::vector<float>(count, 1.0f)]() mutable {
          if constexpr (kReduce) {
            comm.reduce(as_mutable_buffer(std::span<float>(buf)));
          } else {
            comm.broadcast(std::span<float>(buf));
          }
        };
      },
      warmup_for(count));
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(count * sizeof(float)));
}

/// The fabric's native all_reduce called on RankContext, without the Communicator's funnel
/// (argument checks, fingerprint, Work): the difference is the API's own cost.
void BM_AllReduceRaw(benchmark::State& state) {
  const auto count = static_cast<std::size_t>(state.range(1));
  run_raw_steps(state, cluster_options(state.range(2), state.range(0)),
                [count](RankContext& context) {
                  return [&context, buf = std::vector<float>(count, 1.0f)]() mutable {
                    context.all_reduce(context.world(), as_mutable_buffer(std::span<float>(buf)),
                                       ReduceOp::sum);
                  };
                });
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(count * sizeof(float)));
}

// ---------------------------------------------------------------------------------------
// Start-up

/// One whole cluster run whose ranks do nothing: fabric, stacks, worker threads, fibers.
void BM_ClusterStartup(benchmark::State& state) {
  const ClusterOptions options = cluster_options(state.range(1), state.range(0));
  for (auto _ : state) {
    Cluster cluster(options);
    const RunReport report = cluster.run([](Communicator&) {});
    if (!report.ok()) {
      state.SkipWithError(report.summary.c_str());
      break;
    }
  }
}

// ---------------------------------------------------------------------------------------
// The memory bound

/// memcpy of `bytes` between two buffers touched beforehand: the machine's copy bandwidth,
/// against which large collectives are judged. A direct all_reduce of B bytes per rank over
/// p ranks reads p*B and writes p*B, as one copy of p*B bytes does: at 8 ranks 32 B, 32 KiB,
/// 32 MiB and 512 MiB are the bounds for 4 B, 4 KiB, 4 MiB and 64 MiB per rank (the last two
/// do not fit in this machine's caches).
void BM_Memcpy(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  std::vector<std::byte> from(bytes, std::byte{1}), to(bytes, std::byte{0});
  for (auto _ : state) {
    std::memcpy(to.data(), from.data(), bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes));
}

/// The floor under every collective: eight bare Boost.Fiber fibers on one thread (Boost's
/// own round_robin scheduler, no fabric) meet once per iteration: each adds its value to a
/// sum, the last to arrive wakes the seven that suspended. This is the suspend/resume work
/// an 8-rank all_reduce of one float cannot avoid on Boost.Fiber; the rest of
/// BM_AllReduce's time is the fabric's (fingerprints, clocks, recent events, deadlock
/// accounting). Time: one meeting of all eight.
void BM_FiberRendezvous(benchmark::State& state) {
  constexpr int kFibers = 8;
  const benchmark::IterationCount iterations = state.max_iterations;
  std::thread worker([&] {  // a fresh thread: its fiber scheduler is Boost's default
    std::vector<boost::fibers::context*> parked;
    parked.reserve(kFibers);
    int arrived = 0;
    float sum = 0;
    auto meet = [&](float value) {
      sum += value;
      if (++arrived < kFibers) {
        parked.push_back(boost::fibers::context::active());
        parked.back()->suspend();
        return;
      }
      arrived = 0;
      benchmark::DoNotOptimize(sum);
      sum = 0;
      boost::fibers::context* me = boost::fibers::context::active();
      for (boost::fibers::context* sleeper : parked) me->schedule(sleeper);
      parked.clear();
    };
    std::vector<boost::fibers::fiber> fibers;
    for (int f = 0; f < kFibers; ++f) {
      fibers.emplace_back([&, f] {
        if (f == 0) {
          for (auto _ : state) meet(1.0f);
        } else {
          for (benchmark::IterationCount i = 0; i < iterations; ++i) meet(1.0f);
        }
      });
    }
    for (auto& fiber : fibers) fiber.join();
  });
  worker.join();
}

// ---------------------------------------------------------------------------------------
// Registration. Real time throughout: the work runs on the cluster's threads.

// 4 B, 4 KiB, 4 MiB, 64 MiB per rank.
constexpr std::array<std::int64_t, 4> kCounts = {1, 1024, 1024 * 1024, 16 * 1024 * 1024};
constexpr std::int64_t kLargeCount = kLargeBytes / static_cast<std::int64_t>(sizeof(float));

// Every algorithm at every size, threads 1 and 2, at 8 ranks. The steps of 4 MiB and more
// are registered apart (`large`) with a fixed iteration count: Google Benchmark would
// otherwise start a new cluster for each trial of its iteration-count search.
template <std::size_t kAlgorithms>
void algorithms_and_sizes(benchmark::internal::Benchmark* b, bool large) {
  b->ArgNames({"threads", "count", "world", "algo"});
  for (std::size_t algo = 0; algo < kAlgorithms; ++algo) {
    for (std::int64_t count : kCounts) {
      if ((count >= kLargeCount) != large) continue;
      for (std::int64_t threads : {1, 2}) {
        b->Args({threads, count, 8, static_cast<std::int64_t>(algo)});
      }
    }
  }
  if (large) b->Iterations(4);
}

void all_reduce_small(benchmark::internal::Benchmark* b) {
  algorithms_and_sizes<kAllReduceAlgorithms.size()>(b, false);
}
void all_reduce_large(benchmark::internal::Benchmark* b) {
  algorithms_and_sizes<kAllReduceAlgorithms.size()>(b, true);
}
void rooted_small(benchmark::internal::Benchmark* b) {
  algorithms_and_sizes<kRootedAlgorithms.size()>(b, false);
}
void rooted_large(benchmark::internal::Benchmark* b) {
  algorithms_and_sizes<kRootedAlgorithms.size()>(b, true);
}

BENCHMARK(BM_PingPong)
    ->ArgNames({"threads", "count", "pin"})
    ->ArgsProduct({{1, 2}, {1}, {1}})
    ->Args({2, 1, 0})
    ->UseRealTime();
BENCHMARK(BM_PingPongRaw)
    ->ArgNames({"threads", "count"})
    ->ArgsProduct({{1, 2}, {1}})
    ->UseRealTime();
BENCHMARK(BM_RingLap)->ArgNames({"threads", "world"})->ArgsProduct({{1, 2}, {8}})->UseRealTime();
BENCHMARK(BM_Barrier)->ArgNames({"threads", "world"})->ArgsProduct({{1, 2}, {8}})->UseRealTime();
BENCHMARK(BM_AllReduce)->Apply(all_reduce_small)->UseRealTime();
BENCHMARK(BM_AllReduce)->Apply(all_reduce_large)->UseRealTime();
BENCHMARK(BM_Rooted<false>)->Name("BM_Broadcast")->Apply(rooted_small)->UseRealTime();
BENCHMARK(BM_Rooted<false>)->Name("BM_Broadcast")->Apply(rooted_large)->UseRealTime();
BENCHMARK(BM_Rooted<true>)->Name("BM_Reduce")->Apply(rooted_small)->UseRealTime();
BENCHMARK(BM_Rooted<true>)->Name("BM_Reduce")->Apply(rooted_large)->UseRealTime();
BENCHMARK(BM_AllReduceRaw)
    ->ArgNames({"threads", "count", "world"})
    ->ArgsProduct({{1, 2}, {1, 1024, 1024 * 1024}, {8}})
    ->UseRealTime();
// The peers' scale rows (SMPI at 512 and 4,096 ranks), per operation.
BENCHMARK(BM_AllReduce)
    ->Name("BM_AllReduceScale")
    ->ArgNames({"threads", "count", "world", "algo"})
    ->ArgsProduct({{1, 2}, {1}, {512, 4096}, {0}})
    ->UseRealTime();
BENCHMARK(BM_Barrier)
    ->Name("BM_BarrierScale")
    ->ArgNames({"threads", "world"})
    ->ArgsProduct({{1, 2}, {512, 4096}})
    ->UseRealTime();
BENCHMARK(BM_ClusterStartup)
    ->ArgNames({"threads", "world"})
    ->ArgsProduct({{1, 2}, {8, 1024}})
    ->UseRealTime();
BENCHMARK(BM_FiberRendezvous)->UseRealTime();
BENCHMARK(BM_Memcpy)
    ->ArgName("bytes")
    ->Arg(32)
    ->Arg(4 << 10)
    ->Arg(32 << 10)
    ->Arg(4 << 20)
    ->Arg(32 << 20)
    ->Arg(512 << 20)
    ->UseRealTime();

}  // namespace
}  // namespace ranklab::bench

BENCHMARK_MAIN();
