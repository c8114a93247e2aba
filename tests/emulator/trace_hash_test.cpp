// Payload hashes in the trace are XXH64 of what each rank passed in. A blocking collective's
// input is hashed with the other members' when the last one arrives
// (emulator/detail/payload_hashes.hpp), so these check the value itself: in place (the
// collective overwrites the input it hashed), in groups of several sizes, non-blocking
// beside blocking, and for calls that never complete, whose buffers are gone when the trace
// is written.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "tests/emulator/emulator_test_support.hpp"
#include "traces/hash.hpp"
#include "traces/sink.hpp"

namespace ranklab::testing {
namespace {

Trace run_traced(ClusterOptions options, const std::function<void(Communicator&)>& program,
                 RunStatus expected) {
  auto sink = std::make_shared<MemorySink>();
  options.trace_sink = sink;
  const RunReport report = run_ranks(options, program);
  EXPECT_EQ(report.status, expected) << report.summary << "\n" << report.details;
  return sink->trace();
}

/// Rank `rank`'s k-th input: distinct per rank and call, long enough to be batched.
std::vector<float> input(int rank, int k, std::size_t count) {
  return fill<float>(rank * 16 + k, count, /*stride=*/7);
}

std::uint64_t hash_of(const std::vector<float>& v) {
  return payload_hash(std::as_bytes(std::span(v)));
}

class TraceHashTest : public ::testing::TestWithParam<ClusterParam> {};

//! Every collective event's hash is its rank's input, as it was before the collective
//! wrote its result over it: in-place all_reduces on the world and on pairs (1 KiB and
//! more: hashed together; 12 bytes: alone), a broadcast, and a non-blocking all_reduce
//! waited for after a blocking one. Any policy and thread count.
TEST_P(TraceHashTest, CollectiveHashesAreTheInputs) {
  constexpr std::size_t kCounts[] = {3, 256, 4096 + 5};
  const Trace trace = run_traced(
      GetParam().options(),
      [&](Communicator& world) {
        const int me = world.rank();
        int k = 0;
        for (const std::size_t count : kCounts) {
          std::vector<float> x = input(me, k++, count);
          world.all_reduce(std::span(x));
        }
        std::vector<int> pair = {me - me % 2};
        if (pair[0] + 1 < world.size()) pair.push_back(pair[0] + 1);
        Communicator tp = world.new_group(pair, "tp");
        std::vector<float> y = input(me, k++, 1024);
        tp.all_reduce(std::span(y));
        std::vector<float> b = input(me, k++, 512);
        world.broadcast(std::span(b), {.root = 0});
        std::vector<float> later = input(me, k++, 700);
        Work work = world.iall_reduce(as_mutable_buffer(std::span(later)));
        std::vector<float> now = input(me, k++, 300);
        world.all_reduce(std::span(now));
        work.wait();
      },
      RunStatus::ok);
  const std::vector<std::size_t> counts = {3, 256, 4096 + 5, 1024, 512, 700, 300};
  for (const auto& events : trace.ranks) {
    ASSERT_EQ(events.size(), counts.size());
    // The non-blocking all_reduce (k = 5) is posted before the blocking one (k = 6).
    for (std::size_t k = 0; k < counts.size(); ++k) {
      const TraceEvent& e = events[k];
      ASSERT_TRUE(e.has_hash) << "rank " << e.rank << " op " << k;
      EXPECT_EQ(e.hash, hash_of(input(e.rank, static_cast<int>(k), counts[k])))
          << "rank " << e.rank << " op " << k << " " << to_string(e.op);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Worlds, TraceHashTest, ::testing::ValuesIn(cluster_params()),
                         ParamName());

class TraceHashOfWaitingRanksTest : public TraceHashTest {};

//! A blocking collective that never completes keeps its input's hash in the trace, though
//! its rank unwound (and freed the buffer) before the trace was written: every rank but the
//! last waits in an all_reduce the last never joins, waiting for a message nobody sends.
TEST_P(TraceHashOfWaitingRanksTest, PendingBlockingCollectiveKeepsItsHash) {
  const int n = GetParam().world;
  const Trace trace = run_traced(
      GetParam().options(),
      [&](Communicator& world) {
        if (world.rank() == n - 1) {
          std::int32_t v = 0;
          world.recv(std::span(&v, 1), 0, /*tag=*/3);
          return;
        }
        auto x = std::make_unique<std::vector<float>>(input(world.rank(), 0, 2048));
        world.all_reduce(std::span(*x));
      },
      RunStatus::deadlock);
  for (int r = 0; r + 1 < n; ++r) {
    const auto& events = trace.ranks[static_cast<std::size_t>(r)];
    ASSERT_EQ(events.size(), 1u) << "rank " << r;
    EXPECT_EQ(events[0].status, OpStatus::pending);
    EXPECT_TRUE(events[0].has_hash);
    EXPECT_EQ(events[0].hash, hash_of(input(r, 0, 2048))) << "rank " << r;
  }
}

//! A call that disagrees with the others fails as it posts, before the last member
//! arrives: both its event and the waiting members' carry their inputs' hashes.
TEST_P(TraceHashOfWaitingRanksTest, MismatchedCallsKeepTheirHashes) {
  const int n = GetParam().world;
  const Trace trace = run_traced(
      GetParam().options(),
      [&](Communicator& world) {
        const std::size_t count = world.rank() == n - 1 ? 1500 : 2048;
        std::vector<float> x = input(world.rank(), 0, count);
        world.all_reduce(std::span(x));
      },
      RunStatus::mismatch);
  int checked = 0;
  for (int r = 0; r < n; ++r) {
    const auto& events = trace.ranks[static_cast<std::size_t>(r)];
    const std::size_t count = r == n - 1 ? 1500 : 2048;
    // A member that had not posted when the mismatch ended the run has no event.
    if (events.empty()) continue;
    ASSERT_EQ(events.size(), 1u) << "rank " << r;
    EXPECT_EQ(events[0].status, OpStatus::pending);
    EXPECT_EQ(events[0].hash, hash_of(input(r, 0, count))) << "rank " << r;
    ++checked;
  }
  EXPECT_GE(checked, 2) << "the first to post and the one that disagreed";
}

INSTANTIATE_TEST_SUITE_P(Worlds, TraceHashOfWaitingRanksTest,
                         ::testing::ValuesIn(cluster_params(worlds_from(2))), ParamName());

}  // namespace
}  // namespace ranklab::testing
