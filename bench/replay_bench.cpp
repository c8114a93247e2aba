// Replay speed (issue 5 §1: floor 1 M events/s on a trace of at least 1 M events).
//
// Each benchmark records ONE real trace first (outside the timing: a Cluster runs the
// program with a MemorySink), then every iteration replays it with replay_trace: a fresh
// cluster re-issues all operations with synthetic payloads and checks each against the
// recording. The time is the whole replay_trace call (start-up, run, comparison); the
// counter `events_per_s` is recorded operations / time, the figure the floor is about.
//
// Traces (all 8 ranks unless said, 1,048,576+ events):
//   ring      every rank: isend to the next, blocking recv from the previous, wait;
//             2 events per rank per lap (1 float per message)
//   exchange  pairs of ranks swap 1 float with blocking send/recv (even ranks send first)
//   allreduce a native all_reduce of 1 float per step (1 event per rank per step)
//   mixed     ring laps, then an all_reduce every 8 laps, with `--algo ring` every 64
//   ring_allreduce_512  bench/big_trace.sh's: one `--algo ring` all_reduce of 512 i64 and a
//             barrier over 512 ranks (1,047,040 events), where 512 ranks take turns
// Arguments: threads (the replay cluster's worker threads). Counters: events_per_s (real
// time) and events_per_cpu_s (CPU time of the whole process, all threads).
//
//   replay_bench --benchmark_repetitions=5 --benchmark_display_aggregates_only=true
//   bench/summarize.py out.json       (the counter column is events_per_s)
//
// A 1 M-event file is also read (BM_ReadTrace: from memory), and the trace tools are timed
// end to end on it as a file, as `ranklab replay`, `stats` and `diff` run (issue 17 §3, floor
// 1 M events/s of reading on one core): BM_ReadReplayFile (read_trace_file + replay_trace),
// BM_ReadStatsFile (read_trace_file + compute_stats) and BM_DiffFiles (diff_trace_files of
// the file with a copy of itself: events_per_s counts the events of both).
#include <benchmark/benchmark.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "collectives/cluster.hpp"
#include "emulator/replay.hpp"
#include "traces/diff.hpp"
#include "traces/jsonl.hpp"
#include "traces/sink.hpp"
#include "traces/stats.hpp"

namespace ranklab::bench {
namespace {

constexpr int kWorld = 8;
constexpr int kBigWorld = 512;  ///< bench/big_trace.sh's trace
constexpr std::uint64_t kMinEvents = std::uint64_t{1} << 20;

using Program = std::function<void(Communicator&, int steps)>;

std::uint64_t event_count(const Trace& trace) {
  std::uint64_t n = 0;
  for (const auto& events : trace.ranks) n += events.size();
  return n;
}

/// Records `program` with `steps` steps per rank; aborts the benchmark binary if it fails.
Trace record(const Program& program, int steps, int world = kWorld) {
  ClusterOptions options;
  options.world_size = world;
  auto sink = std::make_shared<MemorySink>();
  options.trace_sink = sink;
  Cluster cluster(options);
  const RunReport report = cluster.run([&](Communicator& comm) { program(comm, steps); });
  if (!report.ok()) throw std::runtime_error("recording failed: " + report.summary);
  return sink->trace();
}

void ring(Communicator& comm, int steps) {
  const int me = comm.rank(), n = comm.size();
  float out = 1.0f, in = 0.0f;
  for (int i = 0; i < steps; ++i) {
    Work sent = comm.isend(std::span<const float>(&out, 1), (me + 1) % n, 7);
    comm.recv(std::span<float>(&in, 1), (me + n - 1) % n, 7);
    sent.wait();
  }
}

void exchange(Communicator& comm, int steps) {
  const int me = comm.rank();
  const int peer = me ^ 1;
  float value = 1.0f;
  for (int i = 0; i < steps; ++i) {
    if (me % 2 == 0) {
      comm.send(std::span<const float>(&value, 1), peer, 1);
      comm.recv(std::span<float>(&value, 1), peer, 1);
    } else {
      comm.recv(std::span<float>(&value, 1), peer, 1);
      comm.send(std::span<const float>(&value, 1), peer, 1);
    }
  }
}

void allreduce(Communicator& comm, int steps) {
  float value = 1.0f;
  for (int i = 0; i < steps; ++i) comm.all_reduce(std::span<float>(&value, 1));
}

void mixed(Communicator& comm, int steps) {
  float value[8] = {};
  for (int i = 0; i < steps; ++i) {
    ring(comm, 1);
    if (i % 8 == 7) comm.all_reduce(std::span<float>(value, 8));
    if (i % 64 == 63) comm.all_reduce(std::span<float>(value, 8), {.algorithm = Algorithm::ring});
  }
}

/// bench/big_trace.sh's program (`ranklab run --scenario allreduce --algo ring --world 512
/// --count 512`): one ring all_reduce of 512 i64, then a barrier; 1,047,040 events at 512 ranks.
void ring_allreduce(Communicator& comm, int) {
  std::vector<std::int64_t> x(512, comm.rank());
  comm.all_reduce(std::span(x), {.algorithm = Algorithm::ring});
  comm.barrier();
}

/// The recorded traces, made once per process. Steps are chosen so each holds >= 1 M events.
const Trace& trace_of(const std::string& name) {
  static std::map<std::string, Trace> traces;
  if (const auto it = traces.find(name); it != traces.end()) return it->second;
  Trace trace;
  if (name == "ring") trace = record(ring, kMinEvents / (2 * kWorld));
  if (name == "exchange") trace = record(exchange, kMinEvents / (2 * kWorld));
  if (name == "allreduce") trace = record(allreduce, kMinEvents / kWorld);
  if (name == "mixed") trace = record(mixed, kMinEvents / (2 * kWorld));
  if (name == "ring_allreduce_512") trace = record(ring_allreduce, 1, kBigWorld);
  return traces.emplace(name, std::move(trace)).first->second;
}

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

void replay_benchmark(benchmark::State& state, const std::string& name) {
  const Trace& trace = trace_of(name);
  const std::uint64_t events = event_count(trace);
  ReplayOptions options;
  options.cluster.threads = static_cast<int>(state.range(0));
  const double cpu_start = process_cpu_seconds();
  for (auto _ : state) {
    const ReplayReport report = replay_trace(trace, options);
    if (!report.reproduced() || !report.run.ok()) {
      state.SkipWithError(("replay did not reproduce: " + report.run.summary).c_str());
      break;
    }
  }
  const double replayed = static_cast<double>(events) * static_cast<double>(state.iterations());
  state.counters["events"] = static_cast<double>(events);
  state.counters["events_per_s"] = benchmark::Counter(replayed, benchmark::Counter::kIsRate);
  // Per second of CPU of the whole process (every worker thread): what an idle machine
  // would approach, since the shared build machine's load inflates real time.
  state.counters["events_per_cpu_s"] = replayed / (process_cpu_seconds() - cpu_start);
}

void BM_ReplayRing(benchmark::State& state) { replay_benchmark(state, "ring"); }
void BM_ReplayExchange(benchmark::State& state) { replay_benchmark(state, "exchange"); }
void BM_ReplayAllReduce(benchmark::State& state) { replay_benchmark(state, "allreduce"); }
void BM_ReplayMixed(benchmark::State& state) { replay_benchmark(state, "mixed"); }
void BM_ReplayRingAllReduce512(benchmark::State& state) {
  replay_benchmark(state, "ring_allreduce_512");
}

/// Reading the ring trace back from its JSON Lines text (in memory, so no disk in it).
void BM_ReadTrace(benchmark::State& state) {
  std::ostringstream out;
  write_trace(out, trace_of("ring"));
  const std::string text = out.str();
  const std::uint64_t events = event_count(trace_of("ring"));
  for (auto _ : state) {
    std::istringstream in(text);
    benchmark::DoNotOptimize(read_trace(in, "ring.jsonl"));
  }
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
  state.counters["MiB"] = static_cast<double>(text.size()) / (1024.0 * 1024.0);
}

/// The ring trace as a JSON Lines file, written once per process (removed at exit).
const std::filesystem::path& ring_file(int copy) {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("replay_bench_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    write_trace_file(d / "ring0.jsonl", trace_of("ring"));
    std::filesystem::copy_file(d / "ring0.jsonl", d / "ring1.jsonl");
    std::atexit([] { std::filesystem::remove_all(dir); });
    return d;
  }();
  static const std::filesystem::path files[2] = {dir / "ring0.jsonl", dir / "ring1.jsonl"};
  return files[copy];
}

void file_benchmark(benchmark::State& state, std::uint64_t events_per_iteration,
                    const std::function<void()>& body) {
  const double cpu_start = process_cpu_seconds();
  for (auto _ : state) body();
  const double done =
      static_cast<double>(events_per_iteration) * static_cast<double>(state.iterations());
  state.counters["events_per_s"] = benchmark::Counter(done, benchmark::Counter::kIsRate);
  state.counters["events_per_cpu_s"] = done / (process_cpu_seconds() - cpu_start);
  state.counters["MiB"] =
      static_cast<double>(std::filesystem::file_size(ring_file(0))) / (1024.0 * 1024.0);
}

void BM_ReadReplayFile(benchmark::State& state) {
  const std::uint64_t events = event_count(trace_of("ring"));
  ring_file(0);
  file_benchmark(state, events, [&] {
    const Trace trace = read_trace_file(ring_file(0));
    const ReplayReport report = replay_trace(trace, {});
    if (!report.reproduced()) state.SkipWithError("replay did not reproduce");
  });
}

void BM_ReadStatsFile(benchmark::State& state) {
  const std::uint64_t events = event_count(trace_of("ring"));
  ring_file(0);
  file_benchmark(state, events, [&] {
    benchmark::DoNotOptimize(compute_stats(read_trace_file(ring_file(0))));
  });
}

void BM_DiffFiles(benchmark::State& state) {
  const std::uint64_t events = event_count(trace_of("ring"));
  ring_file(0);
  file_benchmark(state, 2 * events, [&] {
    if (!diff_trace_files(ring_file(0), ring_file(1)).identical()) {
      state.SkipWithError("a trace differs from its copy");
    }
  });
}

// threads 2 is left out: with two worker threads every hand-off costs milliseconds (Boost
// 1.74's spinning, RESULTS.md finding 6), so a 1 M-event replay takes minutes.
BENCHMARK(BM_ReplayRing)->ArgName("threads")->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ReplayExchange)
    ->ArgName("threads")
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_ReplayAllReduce)
    ->ArgName("threads")
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_ReplayMixed)->ArgName("threads")->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ReplayRingAllReduce512)
    ->ArgName("threads")
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_ReadTrace)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ReadReplayFile)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ReadStatsFile)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_DiffFiles)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace ranklab::bench

BENCHMARK_MAIN();
