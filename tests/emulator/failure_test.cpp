// Runs that end badly without a deadlock: collective mismatches (exit 4), rank failures
// (exit 5, root cause first, PeerAbortedError in every waiter), and the watchdog that
// bounds what the exact deadlock check cannot see.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm/errors.hpp"
#include "traces/sink.hpp"
#include "tests/emulator/emulator_test_support.hpp"
#include "tests/support/expect_throw_msg.hpp"

namespace ranklab::testing {
namespace {

using Clock = std::chrono::steady_clock;

// `  {group rank}  {global rank}  ` as the first columns of a mismatch table row.
std::string table_row(int group_rank, int global_rank) {
  return fmt::format("\n  {:>10}  {:>11}  ", group_rank, global_rank);
}

class MismatchTest : public ::testing::TestWithParam<ClusterParam> {};

//! One rank's all_reduce has a different count: the run fails with a mismatch (exit 4)
//! whose table has every member's call (whatever the order they came in), shows both
//! signatures, marks the odd one and blames it, 1 rank against the rest; with two ranks no
//! call has a plurality and rank 0 is named first. Every rank ends with the mismatch or a
//! cancellation.
TEST_P(MismatchTest, AllReduceCountMismatchListsEveryMember) {
  const int n = GetParam().world;
  const bool plurality = n > 2;
  const int odd = plurality ? n - 1 : 0;
  RankErrors errors(n);
  const RunReport report = run_ranks(GetParam().options(), [&](Communicator& world) {
    errors.run(world.rank(), [&] {
      std::vector<float> x(world.rank() == odd ? 5 : 4, 1.0f);
      world.all_reduce(std::span(x));
    });
  });
  EXPECT_EQ(report.status, RunStatus::mismatch) << report.summary << "\n" << report.details;
  EXPECT_EQ(exit_code(report.status), 4);
  EXPECT_EQ(report.root_cause_rank, odd);
  const std::string& d = report.details;
  EXPECT_TRUE(contains(d, "collective mismatch in world collective #0: the members' calls differ"));
  EXPECT_TRUE(contains(d, "all_reduce(sum, f32, count=4)"));
  EXPECT_TRUE(contains(d, "all_reduce(sum, f32, count=5)"));
  const std::string verdict =
      plurality ? fmt::format("rank {} is the odd one: 1 rank vs {}", odd, n - 1)
                : "no call has a plurality: rank 0 vs rank 1";
  EXPECT_EQ(contains(d, "   <-- differs"), plurality) << d;
  EXPECT_TRUE(contains(d, "\n" + verdict));
  EXPECT_TRUE(contains(report.summary, "(" + verdict + ")"));
  for (int r = 0; r < n; ++r) EXPECT_TRUE(contains(d, table_row(r, r))) << "row of rank " << r;
  EXPECT_EQ(d.find("never called"), std::string::npos) << d;
  int mismatches = 0;
  for (int r = 0; r < n; ++r) {
    const std::string& kind = errors.kind(r);
    EXPECT_TRUE(kind == "MismatchError" || kind == "PeerAbortedError") << r << ": " << kind;
    mismatches += kind == "MismatchError";
    const auto state = report.ranks[static_cast<std::size_t>(r)].state;
    EXPECT_EQ(state, r == odd ? RankOutcome::State::failed : RankOutcome::State::aborted) << r;
  }
  EXPECT_EQ(mismatches, 1);
  EXPECT_THROW_MSG(report.rethrow_if_failed(), MismatchError, "collective mismatch in world");
}

//! A difference in element type, reduce op, root or operation is a mismatch too, and the
//! table shows both calls.
TEST_P(MismatchTest, EveryPartOfTheSignatureIsCompared) {
  const int n = GetParam().world;
  const int odd = n > 2 ? n - 1 : 0;  // two ranks: no plurality, rank 0 named first
  struct Case {
    const char* what;
    std::function<void(Communicator&, bool)> call;
    std::vector<std::string> shown;
  };
  const std::vector<Case> cases = {
      {"dtype",
       [](Communicator& w, bool is_odd) {
         if (is_odd) {
           std::vector<double> x(4);
           w.all_reduce(std::span(x));
         } else {
           std::vector<float> x(4);
           w.all_reduce(std::span(x));
         }
       },
       {"all_reduce(sum, f32, count=4)", "all_reduce(sum, f64, count=4)"}},
      {"reduce op",
       [](Communicator& w, bool is_odd) {
         std::vector<float> x(4);
         w.all_reduce(std::span(x), {.op = is_odd ? ReduceOp::max : ReduceOp::sum});
       },
       {"all_reduce(sum, f32, count=4)", "all_reduce(max, f32, count=4)"}},
      {"root",
       [](Communicator& w, bool is_odd) {
         std::vector<float> x(4);
         w.broadcast(std::span(x), {.root = is_odd ? 1 : 0});
       },
       {"broadcast(f32, count=4, root=0)", "broadcast(f32, count=4, root=1)"}},
      {"op",
       [](Communicator& w, bool is_odd) {
         std::vector<float> x(4);
         if (is_odd) {
           w.broadcast(std::span(x), {.root = 0});
         } else {
           w.all_reduce(std::span(x));
         }
       },
       {"all_reduce(sum, f32, count=4)", "broadcast(f32, count=4, root=0)"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const RunReport report = run_ranks(
        GetParam().options(), [&](Communicator& world) { c.call(world, world.rank() == odd); });
    EXPECT_EQ(report.status, RunStatus::mismatch) << report.summary;
    EXPECT_TRUE(contains(report.details, "collective mismatch in world collective #0"));
    for (const auto& s : c.shown) EXPECT_TRUE(contains(report.details, s));
    EXPECT_EQ(report.root_cause_rank, odd);
  }
}

//! A member whose call differs is not the last to post, and the others post after it: the
//! mismatched all_reduce must never run, neither into its buffer nor for the others, who
//! end cancelled while it ends with the mismatch.
TEST(MismatchRaceTest, LaterMembersNeverRunAMismatchedCall) {
  constexpr int kWorld = 4;
  constexpr int kOdd = 1;  // not the last to post
  ClusterOptions options;
  options.world_size = kWorld;
  RankErrors errors(kWorld);
  std::vector<int> reduced(kWorld, 0);
  const RunReport report = run_ranks(options, [&](Communicator& world) {
    errors.run(world.rank(), [&] {
      Work barrier = world.ibarrier();
      std::vector<float> x(world.rank() == kOdd ? 5 : 4, 1.0f);
      world.all_reduce(std::span(x));
      reduced[static_cast<std::size_t>(world.rank())] = 1;
      barrier.wait();
    });
  });
  EXPECT_EQ(report.status, RunStatus::mismatch) << report.summary << "\n" << report.details;
  EXPECT_EQ(report.root_cause_rank, kOdd);
  EXPECT_EQ(errors.kind(kOdd), "MismatchError");
  for (int r = 0; r < kWorld; ++r) {
    EXPECT_EQ(reduced[static_cast<std::size_t>(r)], 0) << "rank " << r << "'s all_reduce ran";
    if (r != kOdd) {
      EXPECT_EQ(errors.kind(r), "PeerAbortedError") << "rank " << r;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Worlds, MismatchTest, ::testing::ValuesIn(cluster_params(worlds_from(2))),
                         ParamName());

class RankFailureTest : public ::testing::TestWithParam<ClusterParam> {};

//! A rank that throws instead of joining an all_reduce fails the run (exit 5) with itself
//! as the root cause, named first in the report; every other rank gets PeerAbortedError.
TEST_P(RankFailureTest, CrashDuringAllReduceNamesRootCause) {
  const int n = GetParam().world;
  const int victim = std::min(3, n - 1);
  RankErrors errors(n);
  const RunReport report = run_ranks(GetParam().options(), [&](Communicator& world) {
    errors.run(world.rank(), [&] {
      std::vector<float> x(16, 1.0f);
      if (world.rank() == victim) {
        throw std::runtime_error(fmt::format("rank {}: simulated failure", victim));
      }
      world.all_reduce(std::span(x));
    });
  });
  const std::string cause = fmt::format("rank {}: simulated failure", victim);
  EXPECT_EQ(report.status, RunStatus::rank_failed) << report.summary;
  EXPECT_EQ(exit_code(report.status), 5);
  EXPECT_EQ(report.root_cause_rank, victim);
  // The lines name the rank already: its error's own "rank N: " is not repeated.
  EXPECT_EQ(report.summary, fmt::format("rank {} failed: simulated failure", victim));
  EXPECT_EQ(report.details.rfind(fmt::format(
                "RANK FAILURE: rank {} failed first (root cause): simulated failure", victim), 0),
            0u)
      << report.details;
  EXPECT_FALSE(contains(report.details, cause + "\n")) << report.details;
  EXPECT_EQ(report.culprit.text, fmt::format("rank {} failed first: simulated failure", victim));
  // RunReport::details ends with the culprit line.
  EXPECT_TRUE(report.details.ends_with(culprit_line(report.culprit) + "\n")) << report.details;
  for (int r = 0; r < n; ++r) {
    const auto& outcome = report.ranks[static_cast<std::size_t>(r)];
    if (r == victim) {
      EXPECT_EQ(outcome.state, RankOutcome::State::failed);
      EXPECT_EQ(outcome.error, cause);
      continue;
    }
    EXPECT_EQ(errors.kind(r), "PeerAbortedError") << "rank " << r;
    EXPECT_TRUE(contains(errors.message(r),
                         fmt::format("rank {}: cancelled: rank {} failed: simulated failure", r,
                                     victim)));
    EXPECT_EQ(outcome.state, RankOutcome::State::aborted) << "rank " << r;
  }
  EXPECT_THROW_MSG(report.rethrow_if_failed(), std::runtime_error, cause);
}

//! Ranks blocked in a receive from, a send to, and a barrier with a rank that then fails
//! are all released with PeerAbortedError; none hangs.
TEST_P(RankFailureTest, EveryKindOfWaiterIsReleased) {
  const int n = GetParam().world;
  const int victim = n - 1;
  RankErrors errors(n);
  const RunReport report = run_ranks(GetParam().options(), [&](Communicator& world) {
    errors.run(world.rank(), [&] {
      const int me = world.rank();
      std::int32_t v = me;
      if (me == victim) {
        for (int k = 0; k < 3; ++k) world.yield();  // let the others block first
        throw std::logic_error("victim gives up");
      }
      if (me % 3 == 0) {
        world.recv(std::span(&v, 1), victim, /*tag=*/0);
      } else if (me % 3 == 1) {
        world.send(std::span<const std::int32_t>(&v, 1), victim, /*tag=*/0);
      } else {
        world.barrier();
      }
    });
  });
  EXPECT_EQ(report.status, RunStatus::rank_failed) << report.summary;
  EXPECT_EQ(report.root_cause_rank, victim);
  EXPECT_TRUE(contains(report.summary, fmt::format("rank {} failed: victim gives up", victim)));
  for (int r = 0; r < victim; ++r) {
    EXPECT_EQ(errors.kind(r), "PeerAbortedError") << "rank " << r;
    EXPECT_EQ(report.ranks[static_cast<std::size_t>(r)].state, RankOutcome::State::aborted);
  }
}

//! A rank that fails after the others have returned fails the run; the others finished.
TEST_P(RankFailureTest, FailureAfterOthersFinished) {
  const int n = GetParam().world;
  const RunReport report = run_ranks(GetParam().options(), [&](Communicator& world) {
    world.barrier();
    if (world.rank() == 0) {
      for (int k = 0; k < n; ++k) world.yield();
      throw std::runtime_error("late failure");
    }
  });
  EXPECT_EQ(report.status, RunStatus::rank_failed);
  EXPECT_EQ(report.root_cause_rank, 0);
  EXPECT_EQ(report.summary, "rank 0 failed: late failure");
  for (int r = 1; r < n; ++r) {
    const auto state = report.ranks[static_cast<std::size_t>(r)].state;
    // A rank still yielding when rank 0 fails may be cancelled; none is left running.
    EXPECT_TRUE(state == RankOutcome::State::finished || state == RankOutcome::State::aborted);
  }
}

INSTANTIATE_TEST_SUITE_P(Worlds, RankFailureTest,
                         ::testing::ValuesIn(cluster_params(worlds_from(2))), ParamName());

// Survivors of a failure: ranks 0, 2, 3, 4 pass values around their own ring three times
// (rank 1 is killed before its first operation), then all_reduce over the world, which
// needs rank 1.
constexpr int kSettleWorld = 5;
const int kSurvivors[] = {0, 2, 3, 4};

void survivors_ring_then_all_reduce(Communicator& world) {
  const int me = world.rank();
  const int at = me == 0 ? 0 : me - 1;  // place in kSurvivors
  const int next = kSurvivors[(at + 1) % 4];
  const int prev = kSurvivors[(at + 3) % 4];
  std::int32_t out = me, in = -1;
  for (int round = 0; round < 3; ++round) {
    Work sent = world.isend(std::span<const std::int32_t>(&out, 1), next, round);
    world.recv(std::span(&in, 1), prev, round);
    sent.wait();
  }
  std::vector<float> x(4, 1.0f);
  world.all_reduce(std::span(x));
}

//! A failure does not stop the other ranks wherever the scheduler had them: they do all
//! they can without the failed rank (here, every message of their ring), and are cancelled
//! only once each is blocked on it. So under every policy and thread count each rank
//! records the same events, and the report names the killed rank.
TEST(FailureSettleTest, SurvivorsDoWhatTheyStillCan) {
  std::vector<std::vector<TraceEvent>> first;
  for (const ClusterParam& param : cluster_params({kSettleWorld})) {
    ClusterOptions options = param.options();
    options.faults.faults = {FaultSpec::parse("kill:1@0")};
    auto sink = std::make_shared<MemorySink>();
    options.trace_sink = sink;
    RankErrors errors(kSettleWorld);
    const RunReport report = run_ranks(options, [&](Communicator& world) {
      errors.run(world.rank(), [&] { survivors_ring_then_all_reduce(world); });
    });
    EXPECT_EQ(report.status, RunStatus::rank_failed) << param.name() << ": " << report.summary;
    EXPECT_EQ(report.root_cause_rank, 1) << param.name();
    const Trace& trace = sink->trace();
    for (const int r : kSurvivors) {
      const auto& events = trace.ranks[static_cast<std::size_t>(r)];
      EXPECT_EQ(errors.kind(r), "PeerAbortedError") << param.name() << " rank " << r;
      ASSERT_EQ(events.size(), 7u) << param.name() << " rank " << r;
      for (std::size_t k = 0; k < 6; ++k) {
        EXPECT_EQ(events[k].status, OpStatus::completed)
            << param.name() << " rank " << r << " event " << k;
      }
      EXPECT_EQ(events[6].op, OpKind::all_reduce);
      EXPECT_EQ(events[6].status, OpStatus::pending);
      EXPECT_TRUE(events[6].blocked) << param.name() << " rank " << r;
    }
    EXPECT_TRUE(trace.ranks[1].empty()) << param.name();
    // The same events, field for field but the Lamport clock, under every schedule.
    std::vector<std::vector<TraceEvent>> events(trace.ranks.begin(), trace.ranks.end());
    for (auto& rank : events) {
      for (auto& e : rank) e.lamport = 0;
    }
    if (first.empty()) {
      first = events;
    } else {
      EXPECT_TRUE(events == first) << param.name() << " records other events";
    }
  }
}

//! A rank that polls (test() and yield()) for a message from a failed rank does not keep
//! the run from settling: once its polls see nothing else happen, the failure is the
//! verdict, long before the watchdog.
TEST(FailureSettleTest, PollingRanksSettleToo) {
  for (const ClusterParam& param : cluster_params({3})) {
    ClusterOptions options = param.options();
    options.faults.faults = {FaultSpec::parse("kill:2@0")};
    const auto start = Clock::now();
    RankErrors errors(3);
    const RunReport report = run_ranks(options, [&](Communicator& world) {
      errors.run(world.rank(), [&] {
        std::int32_t v = 0;
        if (world.rank() == 0) {
          Work never = world.irecv(std::span(&v, 1), 2, /*tag=*/0);
          while (!never.test()) world.yield();
        } else {
          world.recv(std::span(&v, 1), 2, /*tag=*/0);
        }
      });
    });
    EXPECT_LT(Clock::now() - start, std::chrono::seconds(5)) << param.name();
    EXPECT_EQ(report.status, RunStatus::rank_failed) << param.name() << ": " << report.summary;
    EXPECT_EQ(report.root_cause_rank, 2) << param.name();
    EXPECT_EQ(errors.kind(0), "PeerAbortedError") << param.name();
    EXPECT_EQ(errors.kind(1), "PeerAbortedError") << param.name();
  }
}

class WatchdogTest : public ::testing::TestWithParam<ClusterParam> {};

//! A rank polling test() and yielding forever is never blocked, so the exact check cannot
//! see the hang; the cluster timeout (200 ms) ends the run, naming the rank that waited and
//! what it waited for, with TimeoutError in it and the poller unwound.
TEST_P(WatchdogTest, TimeoutEndsAPollingLivelock) {
  const int n = GetParam().world;
  ClusterOptions options = GetParam().options();
  options.timeout = std::chrono::milliseconds(200);
  RankErrors errors(n);
  const auto start = Clock::now();
  int recv_line = 0;  // the blocked receive's line, which the report names
  const RunReport report = run_ranks(options, [&](Communicator& world) {
    errors.run(world.rank(), [&] {
      std::int32_t v = 0;
      if (world.rank() == 0) {
        Work never = world.irecv(std::span(&v, 1), 1, /*tag=*/1);
        while (!never.test()) world.yield();
      } else if (world.rank() == 1) {
        recv_line = __LINE__ + 1;
        world.recv(std::span(&v, 1), 0, /*tag=*/2);
      }
    });
  });
  const auto elapsed = Clock::now() - start;
  EXPECT_GE(elapsed, std::chrono::milliseconds(200));
  EXPECT_LT(elapsed, std::chrono::seconds(10));
  EXPECT_NE(report.status, RunStatus::ok);
  EXPECT_EQ(report.status, RunStatus::deadlock) << "the watchdog ends a hang: exit 3";
  EXPECT_EQ(report.root_cause_rank, 1);
  EXPECT_EQ(report.summary,
            "watchdog: rank 1 waited more than 200 ms in recv from rank 0 tag 2 in world "
            "(1 x i32), op #0 at tests/emulator/failure_test.cpp:" +
                std::to_string(recv_line) + " (TestBody)");
  EXPECT_TRUE(
      contains(report.details, "WATCHDOG: rank 1 waited longer than 200 ms; state of every rank:"));
  EXPECT_EQ(errors.kind(1), "TimeoutError");
  EXPECT_TRUE(contains(errors.message(1), "watchdog: rank 1 waited more than 200 ms"));
  EXPECT_FALSE(errors.kind(0).empty()) << "the poller is unwound too";
  EXPECT_TRUE(contains(errors.message(0), "rank 0: watchdog: rank 1 waited more than 200 ms"));
  EXPECT_THROW_MSG(report.rethrow_if_failed(), TimeoutError, "watchdog: rank 1");
  // The culprit line says "watchdog" once, in its kind, as the MPI backend's does.
  EXPECT_EQ(culprit_line(report.culprit),
            "culprit (watchdog): " + report.summary.substr(std::string("watchdog: ").size()));
}

INSTANTIATE_TEST_SUITE_P(Worlds, WatchdogTest, ::testing::ValuesIn(cluster_params({2, 3})),
                         ParamName());

}  // namespace
}  // namespace ranklab::testing
