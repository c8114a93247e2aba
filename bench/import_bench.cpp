// Reading speed of the NCCL debug log importer beside the JSONL reader (issue 29 §3: the NCCL
// log reader at least as fast as the JSONL reader per operation).
//
// One job, two files, both in memory before the timing: an 8-rank NCCL log (one file per
// process, NCCL 2.30.7's lines: a world all_reduce of bfloat16 and a grouped Send/Recv
// exchange between rank pairs per step, with a line of other INFO between steps), and the
// ranklab trace that log imports into, written as JSONL. Each iteration reads one of them
// into a Trace: BM_ReadNcclLog runs import_nccl_logs (lines, communicators, what never
// completed, message matching, sites), BM_ReadJsonl runs read_trace on that trace's JSONL,
// with its sites (/1) and without (/0, the reader's fast path on shorter lines). The counter
// ops_per_s is the trace's operations / real time; the ratios are the figure.
//
//   import_bench --benchmark_repetitions=3 --benchmark_display_aggregates_only=true
#include <benchmark/benchmark.h>

#include <fmt/format.h>

#include <sstream>
#include <string>
#include <vector>

#include "traces/jsonl.hpp"
#include "traces/nccl_log.hpp"

namespace {

constexpr int kRanks = 8;
constexpr int kSteps = 16384;  // 4 operations per step per rank: 524,288 operations

std::vector<ranklab::NcclLogFile> make_logs() {
  std::vector<ranklab::NcclLogFile> logs;
  for (int r = 0; r < kRanks; ++r) {
    const int pid = 5000 + r;
    const std::string prefix = fmt::format("node-{}:{}:{} [{}] NCCL INFO ", r / 4, pid, pid, r % 4);
    const std::uint64_t comm = 0x55d0c2000000 + static_cast<std::uint64_t>(r) * 0x40000;
    std::string text = prefix + fmt::format("ncclCommInitRank comm {:#x} rank {} nranks {} cudaDev {} "
                                            "nvmlDev {} busId 1b000 commId 0x5c2ea4f3b0e1d27a - Init "
                                            "COMPLETE\n",
                                            comm, r, kRanks, r % 4, r % 4);
    const int peer = r ^ 1;
    std::uint64_t op_count = 0;
    for (int s = 0; s < kSteps; ++s) {
      const auto line = [&](const char* name, int root, std::uint64_t count, int dtype) {
        fmt::format_to(std::back_inserter(text),
                       "{}{}: opCount {:x} sendbuff 0x7f3a{:08x} recvbuff 0x7f3b{:08x} count {} "
                       "datatype {} op 0 root {} comm {:#x} [nranks={}] stream 0x55d0c1a3b000\n",
                       prefix, name, op_count, s * 64, s * 64, count, dtype, root, comm, kRanks);
      };
      line("AllReduce", 0, 1 << 20, 9);
      ++op_count;
      line("Send", peer, 8192, 9);
      line("Recv", peer, 8192, 9);
      ++op_count;
      line("AllReduce", 0, 1024, 7);
      ++op_count;
      text += prefix + "Channel 00/02 : 0 1 2 3 4 5 6 7\n";
    }
    logs.push_back({fmt::format("nccl.node-{}.{}", r / 4, pid), std::move(text)});
  }
  return logs;
}

struct Inputs {
  std::vector<ranklab::NcclLogFile> logs = make_logs();
  std::string jsonl;           ///< the imported trace, sites (the log lines) included
  std::string jsonl_no_sites;  ///< the same without sites: the JSONL reader's fast path
  std::uint64_t operations = 0;
  Inputs() {
    ranklab::Trace trace = ranklab::import_nccl_logs(logs);
    for (const auto& events : trace.ranks) operations += events.size();
    std::ostringstream out;
    ranklab::write_trace(out, trace);
    jsonl = out.str();
    for (auto& events : trace.ranks) {
      for (ranklab::TraceEvent& e : events) e.site = ranklab::CallSite{};
    }
    std::ostringstream bare;
    ranklab::write_trace(bare, trace);
    jsonl_no_sites = bare.str();
  }
};

const Inputs& inputs() {
  static const Inputs made;
  return made;
}

void BM_ReadNcclLog(benchmark::State& state) {
  const Inputs& in = inputs();
  for (auto _ : state) {
    ranklab::Trace trace = ranklab::import_nccl_logs(in.logs);
    benchmark::DoNotOptimize(trace);
  }
  state.counters["ops_per_s"] = benchmark::Counter(
      static_cast<double>(in.operations) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate);
}

void BM_ReadJsonl(benchmark::State& state) {
  const Inputs& in = inputs();
  const std::string& jsonl = state.range(0) != 0 ? in.jsonl : in.jsonl_no_sites;
  for (auto _ : state) {
    std::istringstream text(jsonl);
    ranklab::Trace trace = ranklab::read_trace(text, "bench.jsonl");
    benchmark::DoNotOptimize(trace);
  }
  state.counters["ops_per_s"] = benchmark::Counter(
      static_cast<double>(in.operations) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate);
}

BENCHMARK(BM_ReadNcclLog)->Unit(benchmark::kMillisecond)->UseRealTime();
// Argument: 1 with sites (the same trace), 0 without (fewer bytes per line).
BENCHMARK(BM_ReadJsonl)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
