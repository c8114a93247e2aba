// Determinism (DESIGN.md section 5): every point-to-point algorithm gives bitwise-identical
// results and identical per-rank traces under every scheduling policy and thread count; and
// the algorithms agree with each other where they share a reduction order.
#include <cmath>
#include <map>
#include <memory>

#include "tests/collectives/grid.hpp"
#include "traces/sink.hpp"

namespace ranklab::testing {
namespace {

constexpr int kWorld = 7;  // not a power of two: folds, uneven blocks and partial trees
constexpr std::size_t kCount = 1027;

// Values of many magnitudes, so that the order of a sum shows in its rounding.
float wild(int rank, std::size_t i) {
  return static_cast<float>(std::sin(rank * 1000.0 + static_cast<double>(i)) *
                            std::pow(10.0, static_cast<double>(i % 7) - 3.0));
}

std::vector<float> wild_values(int rank, std::size_t count) {
  std::vector<float> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = wild(rank, i);
  return v;
}

// One run of every point-to-point algorithm: each rank's results, in call order, and the trace.
struct Outcome {
  std::vector<std::vector<std::vector<float>>> results;  // [rank][call]
  Trace trace;
};

void workload(Communicator& comm, std::vector<std::vector<float>>& out) {
  const int root = 3;
  const auto p = static_cast<std::size_t>(comm.size());
  for (Algorithm a :
       {Algorithm::ring, Algorithm::recursive_doubling, Algorithm::halving_doubling}) {
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::avg, ReduceOp::max}) {
      auto data = wild_values(comm.rank(), kCount);
      comm.all_reduce(std::span<float>(data), {.op = op, .algorithm = a});
      out.push_back(std::move(data));
    }
  }
  const auto all = wild_values(comm.rank(), kCount * p);
  std::vector<float> block(kCount), gathered(kCount * p);
  comm.reduce_scatter(std::span<const float>(all), std::span<float>(block),
                      {.algorithm = Algorithm::ring});
  out.push_back(block);
  comm.all_gather(std::span<const float>(block), std::span<float>(gathered),
                  {.algorithm = Algorithm::ring});
  out.push_back(gathered);
  auto reduced = wild_values(comm.rank(), kCount);
  comm.reduce(as_mutable_buffer(std::span<float>(reduced)),
              {.root = root, .algorithm = Algorithm::tree});
  out.push_back(reduced);
  comm.broadcast(std::span<float>(reduced), {.root = root, .algorithm = Algorithm::tree});
  out.push_back(reduced);
  comm.gather(as_buffer(std::span<const float>(block)),
              as_mutable_buffer(std::span<float>(gathered)),
              {.root = root, .algorithm = Algorithm::tree});
  out.push_back(gathered);
  comm.scatter(as_buffer(std::span<const float>(all)), as_mutable_buffer(std::span<float>(block)),
               {.root = root, .algorithm = Algorithm::tree});
  out.push_back(block);
  comm.barrier({.algorithm = Algorithm::dissemination});
  std::vector<float> transposed(all.size());
  comm.all_to_all(as_buffer(std::span<const float>(all)),
                  as_mutable_buffer(std::span<float>(transposed)),
                  {.algorithm = Algorithm::pairwise});
  out.push_back(std::move(transposed));
}

Outcome run_workload(const std::string& policy, int threads) {
  auto sink = std::make_shared<MemorySink>();
  Outcome outcome;
  outcome.results.resize(kWorld);
  ClusterOptions options{.world_size = kWorld,
                         .policy = SchedulePolicy::parse(policy),
                         .threads = threads,
                         .trace_sink = sink};
  expect_run_ok(options, [&](Communicator& comm) {
    workload(comm, outcome.results[static_cast<std::size_t>(comm.rank())]);
  });
  outcome.trace = sink->trace();
  return outcome;
}

const Outcome& baseline() {
  static const Outcome outcome = run_workload("rank-order", 1);
  return outcome;
}

// A rank's events without their Lamport clocks. The fabric advances a receiver's clock when
// a message is delivered, and with a receive and a send in flight at once (every exchange of
// these algorithms) whether the send was posted before or after that delivery depends on the
// schedule; everything else in the events must not.
std::vector<TraceEvent> without_clocks(std::vector<TraceEvent> events) {
  for (TraceEvent& e : events) e.lamport = 0;
  return events;
}

class ScheduleTest : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

//! Same results, bit for bit, and the same per-rank event sequences as rank-order on one
//! thread.
TEST_P(ScheduleTest, ResultsAndTracesMatchRankOrder) {
  const auto& [policy, threads] = GetParam();
  const Outcome outcome = run_workload(policy, threads);
  const Outcome& base = baseline();
  ASSERT_EQ(outcome.results.size(), base.results.size());
  for (std::size_t r = 0; r < base.results.size(); ++r) {
    ASSERT_EQ(outcome.results[r].size(), base.results[r].size()) << "rank " << r;
    for (std::size_t call = 0; call < base.results[r].size(); ++call) {
      EXPECT_EQ(hash_of(std::span<const float>(outcome.results[r][call])),
                hash_of(std::span<const float>(base.results[r][call])))
          << "rank " << r << " call " << call;
    }
    EXPECT_EQ(without_clocks(outcome.trace.ranks[r]), without_clocks(base.trace.ranks[r]))
        << "rank " << r << "'s events differ";
  }
}

std::string schedule_name(const ::testing::TestParamInfo<std::tuple<std::string, int>>& param) {
  return fmt::format("{}_t{}", policy_name(std::get<0>(param.param)), std::get<1>(param.param));
}

INSTANTIATE_TEST_SUITE_P(Policies, ScheduleTest,
                         ::testing::Combine(::testing::Values("rank-order", "random:1", "random:42",
                                                              "pct:7", "pct:3:5"),
                                            ::testing::Values(1, 2)),
                         schedule_name);

//! Recursive doubling and halving-doubling reduce in the same pairwise tree: identical bits,
//! on every world size, for every op; and every rank holds the same bits.
TEST(AlgorithmAgreement, RecursiveDoublingEqualsHalvingDoubling) {
  for (int world : {2, 3, 5, 6, 7, 8, 12, 13, 16}) {
    std::map<ReduceOp, std::size_t> hashes;  // recursive doubling's result on rank 0, by op
    for (Algorithm a : {Algorithm::recursive_doubling, Algorithm::halving_doubling}) {
      run_grid(world, [&](Communicator& comm) {
        for (ReduceOp op : kOps) {
          auto data = wild_values(comm.rank(), kCount);
          comm.all_reduce(std::span<float>(data), {.op = op, .algorithm = a});
          const std::size_t h = hash_of(std::span<const float>(data));
          if (a == Algorithm::recursive_doubling && comm.rank() == 0) hashes[op] = h;
          if (a == Algorithm::halving_doubling) {
            EXPECT_EQ(h, hashes.at(op))
                << "w" << world << " " << to_string(op) << " rank " << comm.rank();
          }
        }
      });
    }
  }
}

//! Buffers above PeerLink's 1 MiB bound are reduced by oneTBB workers: same bits as each
//! other on every rank, run to run, thread count to thread count, and within tolerance.
TEST(AlgorithmAgreement, ParallelReductionOfLargeBuffers) {
  constexpr std::size_t kLarge = (1 << 18) + 3;  // 2 MiB of f64
  constexpr int kRanks = 3;
  const auto expected = references<double>(ReduceOp::sum, kRanks, 0, kLarge);
  for (Algorithm a : {Algorithm::recursive_doubling, Algorithm::halving_doubling}) {
    std::vector<std::size_t> hashes;
    for (int threads : {1, 2}) {
      std::vector<std::size_t> by_rank(kRanks);
      std::vector<std::string> errors(kRanks);
      run_grid(
          kRanks,
          [&](Communicator& comm) {
            auto data = reduction_inputs<double>(ReduceOp::sum, kRanks, comm.rank(), kLarge);
            comm.all_reduce(std::span<double>(data), {.algorithm = a});
            const auto r = static_cast<std::size_t>(comm.rank());
            by_rank[r] = hash_of(std::span<const double>(data));
            errors[r] = compare_reduction<double>(ReduceOp::sum, std::span<const double>(data),
                                                  expected, /*exact=*/false);
          },
          ClusterOptions{.threads = threads});
      for (int r = 0; r < kRanks; ++r) {
        EXPECT_EQ(errors[static_cast<std::size_t>(r)], "") << to_string(a) << " rank " << r;
        EXPECT_EQ(by_rank[static_cast<std::size_t>(r)], by_rank[0]) << to_string(a);
      }
      hashes.push_back(by_rank[0]);
    }
    EXPECT_EQ(hashes[0], hashes[1]) << to_string(a);
  }
}

}  // namespace
}  // namespace ranklab::testing
