// Deadlock detection, exact with one thread or several: the run ends at once with a report
// naming every blocked rank and its operation, the wait-for cycles, the culprits and each
// rank's last events; every blocked rank gets a DeadlockError; the status is deadlock (3).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "comm/errors.hpp"
#include "tests/emulator/emulator_test_support.hpp"
#include "tests/support/expect_throw_msg.hpp"

namespace ranklab::testing {
namespace {

using Clock = std::chrono::steady_clock;

// A generous watchdog: these runs must end by exact detection, long before it.
ClusterOptions exact_options(const ClusterParam& p) {
  ClusterOptions o = p.options();
  o.timeout = std::chrono::milliseconds(60'000);
  return o;
}

// Ranks first..last as reports list them: "0, 1" for two, a range "0-62" from three on.
std::string rank_range(int first, int last) {
  if (last - first >= 2) return fmt::format("{}-{}", first, last);
  return last == first ? std::to_string(first) : fmt::format("{}, {}", first, last);
}

class DeadlockTest : public ::testing::TestWithParam<ClusterParam> {};

//! Ranks 0 and 1 both block in a rendezvous send to each other: the run ends at once as a
//! deadlock with the cycle 0 -> 1 -> 0, both sends listed, DeadlockError in both ranks,
//! and exit code 3; the other ranks finish normally.
TEST_P(DeadlockTest, SendSendCycleUnderRendezvous) {
  const int n = GetParam().world;
  RankErrors errors(n);
  const auto start = Clock::now();
  const RunReport report = run_ranks(exact_options(GetParam()), [&](Communicator& world) {
    errors.run(world.rank(), [&] {
      const int me = world.rank();
      if (me > 1) return;
      const std::int32_t mine = me;
      std::int32_t theirs = -1;
      world.send(std::span(&mine, 1), 1 - me, /*tag=*/0);
      world.recv(std::span(&theirs, 1), 1 - me, /*tag=*/0);
    });
  });
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(10)) << "found by the exact check";
  EXPECT_EQ(report.status, RunStatus::deadlock) << report.summary;
  EXPECT_EQ(exit_code(report.status), 3);
  EXPECT_EQ(report.summary, "deadlock: 2 ranks blocked, none can proceed; cycle 0 -> 1 -> 0");
  EXPECT_TRUE(contains(report.details, "rank 0: send to rank 1 tag 0 in world (1 x i32), op #0"));
  EXPECT_TRUE(contains(report.details, "rank 1: send to rank 0 tag 0 in world (1 x i32), op #0"));
  EXPECT_TRUE(contains(report.details, "wait-for cycles:\n  0 -> 1 -> 0\n"));
  EXPECT_TRUE(contains(report.details, "cycle 0 -> 1 -> 0: each rank waits for the next one"));
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(errors.kind(r), "DeadlockError") << "rank " << r;
    EXPECT_TRUE(contains(errors.message(r), fmt::format("rank {}: deadlock: 2 ranks blocked", r)));
    EXPECT_EQ(report.ranks[static_cast<std::size_t>(r)].state, RankOutcome::State::deadlocked);
  }
  for (int r = 2; r < n; ++r) {
    EXPECT_EQ(report.ranks[static_cast<std::size_t>(r)].state, RankOutcome::State::finished);
    EXPECT_EQ(errors.kind(r), "");
  }
  EXPECT_EQ(report.root_cause_rank, -1);
  EXPECT_THROW_MSG(report.rethrow_if_failed(), Error, "cycle 0 -> 1 -> 0");
}

//! Under eager sends it finishes, as a potential deadlock (latent_deadlock_test.cpp).
TEST_P(DeadlockTest, SendSendFinishesUnderEager) {
  ClusterOptions options = exact_options(GetParam());
  options.send_mode = SendMode::parse("eager");
  EXPECT_EQ(run_ranks(options, [&](Communicator& world) {
    const int me = world.rank();
    if (me > 1) return;
    const std::int32_t mine = me;
    std::int32_t theirs = -1;
    world.send(std::span(&mine, 1), 1 - me, /*tag=*/0);
    world.recv(std::span(&theirs, 1), 1 - me, /*tag=*/0);
    EXPECT_EQ(theirs, 1 - me);
  }).status, RunStatus::unsafe);
}

//! The last rank returns without entering a barrier: the report names it as finished
//! while every other rank waits for it, and as never having joined barrier #0 of world.
TEST_P(DeadlockTest, MissingBarrierNamesTheFinishedRank) {
  const int n = GetParam().world;
  RankErrors errors(n);
  const RunReport report = run_ranks(exact_options(GetParam()), [&](Communicator& world) {
    errors.run(world.rank(), [&] {
      if (world.rank() == world.size() - 1) return;
      world.barrier();
    });
  });
  const int last = n - 1;
  EXPECT_EQ(report.status, RunStatus::deadlock) << report.summary;
  EXPECT_EQ(exit_code(report.status), 3);
  EXPECT_TRUE(contains(report.summary, fmt::format("deadlock: {} rank{} blocked, none can proceed",
                                                   n - 1, n == 2 ? "" : "s")));
  const std::string waiters = n == 2 ? "rank 0 waits" : "ranks " + rank_range(0, n - 2) + " wait";
  EXPECT_TRUE(contains(report.details,
                       fmt::format("rank {} finished (returned) while {} for it", last, waiters)));
  EXPECT_TRUE(contains(
      report.details, fmt::format("rank {} never joined barrier #0 of world (it finished)", last)));
  // The culprit line names the waiters as the culprits section does: one range, at any size.
  const std::string and_waiters = n == 3 ? "ranks 0 and 1 wait" : waiters;
  EXPECT_TRUE(contains(report.culprit.text,
                       fmt::format("rank {} returned while {} for it", last, and_waiters)))
      << report.culprit.text;
  // Every blocked rank made the same call: one line, the ranks as a range, and their count.
  const std::string blocked =
      n == 2 ? "\n  rank 0: barrier #0 in world: barrier(), op #0 at "
             : fmt::format("\n  ranks {} ({} ranks): barrier #0 in world: barrier(), op #0 at ",
                           rank_range(0, n - 2), n - 1);
  EXPECT_TRUE(contains(report.details, blocked)) << report.details;
  EXPECT_FALSE(contains(report.details, "more")) << report.details;
  // The count stays exact (--json gives it beside the first operations).
  EXPECT_EQ(report.analysis.blocked_total, static_cast<std::size_t>(n - 1));
  EXPECT_TRUE(contains(report.details, "(none: the ranks wait for ranks that can no longer act)"));
  for (int r = 0; r < last; ++r) {
    EXPECT_EQ(errors.kind(r), "DeadlockError") << "rank " << r;
    EXPECT_EQ(report.ranks[static_cast<std::size_t>(r)].state, RankOutcome::State::deadlocked);
  }
  EXPECT_EQ(report.ranks[static_cast<std::size_t>(last)].state, RankOutcome::State::finished);
}

//! A rank that sends to itself with a blocking rendezvous send waits for itself: 0 -> 0.
TEST_P(DeadlockTest, BlockingSendToSelfIsASelfCycle) {
  const RunReport report = run_ranks(exact_options(GetParam()), [&](Communicator& world) {
    if (world.rank() != 0) return;
    const std::int32_t v = 1;
    world.send(std::span(&v, 1), 0, /*tag=*/2);
  });
  EXPECT_EQ(report.status, RunStatus::deadlock) << report.summary;
  EXPECT_EQ(report.summary, "deadlock: 1 rank blocked, none can proceed; cycle 0 -> 0");
  EXPECT_TRUE(contains(report.details, "rank 0: send to rank 0 tag 2 in world (1 x i32), op #0"));
}

INSTANTIATE_TEST_SUITE_P(Worlds, DeadlockTest, ::testing::ValuesIn(cluster_params(worlds_from(2))),
                         ParamName());

class RingDeadlockTest : public ::testing::TestWithParam<ClusterParam> {};

//! Ranks 0, 1, 2 each block sending to the next (the others return): cycle 0 -> 1 -> 2 -> 0.
TEST_P(RingDeadlockTest, ThreeCycleOfBlockingSends) {
  const RunReport report = run_ranks(exact_options(GetParam()), [&](Communicator& world) {
    const int me = world.rank();
    if (me > 2) return;
    const std::int32_t v = me;
    world.send(std::span(&v, 1), (me + 1) % 3, /*tag=*/1);
  });
  EXPECT_EQ(report.status, RunStatus::deadlock) << report.summary;
  EXPECT_EQ(report.summary, "deadlock: 3 ranks blocked, none can proceed; cycle 0 -> 1 -> 2 -> 0");
  for (int r = 0; r < 3; ++r) {
    EXPECT_TRUE(contains(report.details,
                         fmt::format("rank {}: send to rank {} tag 1 in world", r, (r + 1) % 3)));
  }
}

//! Every rank blocks sending to the next around the whole world: the cycle lists them all.
TEST_P(RingDeadlockTest, WholeWorldRingOfBlockingSends) {
  const int n = GetParam().world;
  RankErrors errors(n);
  const RunReport report = run_ranks(exact_options(GetParam()), [&](Communicator& world) {
    errors.run(world.rank(), [&] {
      const int me = world.rank();
      const std::int32_t v = me;
      std::int32_t in = -1;
      world.send(std::span(&v, 1), (me + 1) % n, /*tag=*/1);
      world.recv(std::span(&in, 1), (me + n - 1) % n, /*tag=*/1);
    });
  });
  std::string cycle = "0";
  for (int r = 1; r < n; ++r) cycle += " -> " + std::to_string(r);
  cycle += " -> 0";
  EXPECT_EQ(report.status, RunStatus::deadlock) << report.summary;
  EXPECT_TRUE(contains(report.summary, "cycle " + cycle));
  for (int r = 0; r < n; ++r) EXPECT_EQ(errors.kind(r), "DeadlockError") << "rank " << r;
}

INSTANTIATE_TEST_SUITE_P(Worlds, RingDeadlockTest,
                         ::testing::ValuesIn(cluster_params(worlds_from(3))), ParamName());

class DeadlockReportTest : public ::testing::TestWithParam<ClusterParam> {};

//! A deadlock mixing a collective, a receive, a receive from any source and a send lists
//! every blocked rank with its kind, group, peer, tag, count, collective index and op
//! number, both cycles, the rank that never joined, and each rank's last events.
TEST_P(DeadlockReportTest, ListsEveryBlockedOperationAndLastEvents) {
  ClusterOptions options = exact_options(GetParam());
  RankErrors errors(4);
  // The lines of the calls, recorded where they are made (every rank records the same).
  std::atomic<int> first_line = 0, second_line = 0, recv_line = 0, send_line = 0;
  const RunReport report = run_ranks(options, [&](Communicator& world) {
    errors.run(world.rank(), [&] {
      const int me = world.rank();
      const std::vector<int> pair = {me - me % 2, me - me % 2 + 1};
      Communicator tp = world.new_group(pair, "tp");
      if (me < 2) {
        std::vector<float> x(4, 1.0f);
        first_line = __LINE__ + 1;
        tp.all_reduce(std::span(x));  // collective #0 of tp[0,1]: completes
        if (me == 0) {
          second_line = __LINE__ + 1;
          tp.all_reduce(std::span(x));  // #1: rank 1 never joins
        } else {
          std::vector<double> y(2);
          recv_line = __LINE__ + 1;
          tp.recv(std::span(y), 0, /*tag=*/9);  // rank 0 never sends
        }
      } else if (me == 2) {
        std::int32_t v = 0;
        world.recv(std::span(&v, 1), kAnySource, /*tag=*/5);
      } else {
        const std::int32_t v = 3;
        send_line = __LINE__ + 1;
        world.send(std::span(&v, 1), 2, /*tag=*/6);  // tag 6 never matches tag 5
      }
    });
  });
  const auto at = [](int line) {
    return fmt::format("at tests/emulator/deadlock_test.cpp:{} (TestBody)", line);
  };
  ASSERT_EQ(report.status, RunStatus::deadlock) << report.summary << "\n" << report.details;
  const std::string& d = report.details;
  EXPECT_TRUE(
      contains(report.summary, "deadlock: 4 ranks blocked, none can proceed; cycle 0 -> 1 -> 0"));
  EXPECT_TRUE(
      contains(d, "DEADLOCK: every live rank is blocked and nothing pending can complete them"));
  EXPECT_TRUE(
      contains(d, "rank 0: all_reduce #1 in tp[0,1]: all_reduce(sum, f32, count=4), op #1"));
  EXPECT_TRUE(contains(d, "rank 1: recv from rank 0 tag 9 in tp[0,1] (2 x f64), op #1"));
  EXPECT_TRUE(contains(d, "rank 2: recv from any source tag 5 in world (1 x i32), op #0"));
  EXPECT_TRUE(contains(d, "rank 3: send to rank 2 tag 6 in world (1 x i32), op #0"));
  EXPECT_TRUE(contains(d, "wait-for cycles:\n  0 -> 1 -> 0\n  2 -> 3 -> 2\n"));
  // Every operation named with its call site (issue 15): the lines of the calls above.
  EXPECT_TRUE(contains(d, "op #1 " + at(second_line) + "\n"));
  EXPECT_TRUE(contains(d, "op #0 " + at(send_line) + "\n"));
  EXPECT_TRUE(contains(d,
                       "rank 1 never joined all_reduce #1 of tp[0,1] (it is blocked in recv "
                       "from rank 0 tag 9 in tp[0,1] (2 x f64), op #1 " +
                           at(recv_line) + ")"));
  EXPECT_TRUE(contains(d, "last events:\n"));
  EXPECT_TRUE(contains(d, "  rank 0:\n    #0 all_reduce #0 in tp[0,1] (4 x f32) " +
                              at(first_line) + "\n"));
  EXPECT_TRUE(contains(d, "  rank 1:\n    #0 all_reduce #0 in tp[0,1] (4 x f32) " +
                              at(first_line) + "\n"));
  EXPECT_TRUE(contains(d, "  ranks 2, 3: (no operations completed)\n"));
  for (int r = 0; r < 4; ++r) EXPECT_EQ(errors.kind(r), "DeadlockError") << "rank " << r;
}

//! The last-events list keeps each rank's 8 most recent operations, oldest first.
TEST_P(DeadlockReportTest, LastEventsKeepTheEightMostRecent) {
  std::atomic<int> all_reduce_line = 0;  // recorded at the call, by every rank alike
  const RunReport report = run_ranks(exact_options(GetParam()), [&](Communicator& world) {
    std::vector<std::int32_t> x(2, 1);
    all_reduce_line = __LINE__ + 1;
    for (int k = 0; k < 10; ++k) world.all_reduce(std::span(x));  // ops #0..#9
    if (world.rank() == 0) world.barrier();                       // op #10, never completes
  });
  ASSERT_EQ(report.status, RunStatus::deadlock) << report.summary;
  const std::string block = "  rank 0:\n" + [&] {
    std::string lines;
    for (int k = 2; k < 10; ++k) {
      lines += fmt::format(
          "    #{} all_reduce #{} in world (2 x i32) at tests/emulator/deadlock_test.cpp:{} "
          "(TestBody)\n",
          k, k, all_reduce_line.load());
    }
    return lines;
  }();
  EXPECT_TRUE(contains(report.details, block));
  EXPECT_TRUE(contains(report.details, "rank 0: barrier #10 in world: barrier(), op #10"));
}

//! A trace sink that keeps every event (MemorySink) stands in for the fabric's own ring of
//! recent events (the ring is a second copy of every event, 1.7 KiB a rank at a million
//! ranks): the report lists the same last events as with a sink that keeps none.
TEST_P(DeadlockReportTest, LastEventsFromAKeepingSinkMatchTheRing) {
  struct Discarding final : TraceSink {  // keeps nothing: the fabric keeps its ring
    void record(const TraceEvent&) override {}
    void record_compute_after(int, const ComputeWork&) override {}
    void finish(const TraceHeader&) override {}
  };
  const auto program = [](Communicator& world) {
    std::vector<std::int32_t> x(2, 1);
    for (int k = 0; k < 10; ++k) world.all_reduce(std::span(x));
    if (world.rank() == 0) world.barrier();  // never completes
  };
  std::vector<std::string> details;
  for (const bool keeping : {false, true}) {
    ClusterOptions options = exact_options(GetParam());
    options.trace_sink = keeping ? std::shared_ptr<TraceSink>(std::make_shared<MemorySink>())
                                 : std::make_shared<Discarding>();
    const RunReport report = run_ranks(options, program);
    ASSERT_EQ(report.status, RunStatus::deadlock) << report.summary;
    details.push_back(report.details);
  }
  EXPECT_EQ(details[0], details[1]);
  EXPECT_TRUE(contains(details[1], "  rank 0:\n    #2 all_reduce #2 in world (2 x i32) at "));
  EXPECT_FALSE(contains(details[1], "#1 all_reduce #1 in world"));  // eight kept, oldest gone
}

//! In four ranks, the rank that skips the barrier is rank 3, named exactly so.
TEST_P(DeadlockReportTest, MissingBarrierInFourRanks) {
  const RunReport report = run_ranks(exact_options(GetParam()), [](Communicator& world) {
    if (world.rank() != 3) world.barrier();
  });
  ASSERT_EQ(report.status, RunStatus::deadlock) << report.summary;
  EXPECT_TRUE(
      contains(report.details, "rank 3 finished (returned) while ranks 0-2 wait for it"));
  EXPECT_TRUE(contains(report.details, "rank 3 never joined barrier #0 of world (it finished)"));
  EXPECT_EQ(report.summary, "deadlock: 3 ranks blocked, none can proceed");
}

//! Ranks waiting to receive from, or send to, a rank that has returned are listed with
//! their operations, and the returned rank is named as finished while they wait for it.
TEST_P(DeadlockReportTest, PointToPointWithAnEndedRank) {
  const RunReport report = run_ranks(exact_options(GetParam()), [](Communicator& world) {
    std::int32_t v = 0;
    switch (world.rank()) {
      case 0:
        world.recv(std::span(&v, 1), 1, /*tag=*/0);
        break;
      case 2:
        world.send(std::span<const std::int32_t>(&v, 1), 1, /*tag=*/0);
        break;
      default:
        break;  // ranks 1 and 3 return
    }
  });
  ASSERT_EQ(report.status, RunStatus::deadlock) << report.summary;
  EXPECT_TRUE(contains(report.details, "rank 1 finished (returned) while ranks 0, 2 wait for it"));
  EXPECT_TRUE(contains(report.details, "rank 0: recv from rank 1 tag 0 in world (1 x i32), op #0"));
  EXPECT_TRUE(contains(report.details, "rank 2: send to rank 1 tag 0 in world (1 x i32), op #0"));
}

INSTANTIATE_TEST_SUITE_P(Worlds, DeadlockReportTest, ::testing::ValuesIn(cluster_params({4})),
                         ParamName());

}  // namespace
}  // namespace ranklab::testing
