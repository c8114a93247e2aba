// Latent deadlocks (emulator/detail/latent_deadlock.hpp): a run with buffered sends that
// finished only because of the buffering ends unsafe (exit 6) with culprit
// `potential-deadlock`, naming the buffered send and the receive that takes it, each with its
// call site; a program that merely sends before its receive is posted, as most correct
// programs do under eager sends, ends ok. Under every policy and thread count.
#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tests/emulator/emulator_test_support.hpp"

namespace ranklab::testing {
namespace {

// Every program below needs ranks 0 and 1: the suite runs on 2, 3 and 8 ranks, and a world
// of one (LatentDeadlockOneRankTest) has programs of its own rather than checks that skip.
class LatentDeadlockTest : public ::testing::TestWithParam<ClusterParam> {
 protected:
  void SetUp() override { ASSERT_GE(GetParam().world, 2) << "these programs need two ranks"; }

  RunReport run(const std::function<void(Communicator&)>& fn,
                const char* send_mode = "eager") const {
    ClusterOptions options = GetParam().options();
    options.send_mode = SendMode::parse(send_mode);
    return run_ranks(options, fn);
  }
};

int line_of_send = 0;
int line_of_recv = 0;

// Ranks 0 and 1 both send before they receive: the classic exchange that MPI allows to
// deadlock. Records the lines of its send and its receive.
void exchange(Communicator& world) {
  const int me = world.rank();
  if (me > 1) return;
  const std::int32_t mine = me;
  std::int32_t theirs = -1;
  line_of_send = __LINE__ + 1;
  world.send(std::span(&mine, 1), 1 - me, /*tag=*/0);
  line_of_recv = __LINE__ + 1;
  world.recv(std::span(&theirs, 1), 1 - me, /*tag=*/0);
  EXPECT_EQ(theirs, 1 - me) << "the buffered run itself computes the right thing";
}

//! The send-send exchange passes under eager, but only thanks to buffering: the verdict is
//! unsafe (exit 6), the culprit names the cycle and both sides of a buffered message with
//! their call sites, and every rank finished.
TEST_P(LatentDeadlockTest, SendSendExchangeIsAPotentialDeadlock) {
  const RunReport report = run(exchange);
  ASSERT_EQ(report.status, RunStatus::unsafe) << report.summary << "\n" << report.details;
  EXPECT_EQ(exit_code(report.status), 6);
  EXPECT_EQ(report.culprit.kind, CulpritKind::potential_deadlock);
  EXPECT_EQ(report.culprit.ranks.size(), 2u);
  const std::string file = "tests/emulator/latent_deadlock_test.cpp";
  const std::string send_site = fmt::format("at {}:{} (exchange)", file, line_of_send);
  const std::string recv_site = fmt::format("at {}:{} (exchange)", file, line_of_recv);
  // One buffered send, or (on two threads) both: "because it was" or "they were buffered".
  EXPECT_TRUE(contains(report.culprit.text, "completed only because")) << report.culprit.text;
  EXPECT_TRUE(contains(report.culprit.text, " buffered; under rendezvous sends"))
      << report.culprit.text;
  EXPECT_TRUE(contains(report.culprit.text, send_site)) << report.culprit.text;
  EXPECT_TRUE(contains(report.culprit.text, recv_site)) << report.culprit.text;
  EXPECT_TRUE(contains(report.culprit.text, "the cycle")) << report.culprit.text;
  EXPECT_TRUE(contains(report.details, "cycle 0 -> 1 -> 0") ||
              contains(report.details, "cycle 1 -> 0 -> 1"))
      << report.details;
  EXPECT_TRUE(contains(report.summary, "potential deadlock: ")) << report.summary;
  for (const RankOutcome& rank : report.ranks) EXPECT_EQ(rank.state, RankOutcome::State::finished);
}

//! Off, the same run is ok: buffering taken as given.
TEST_P(LatentDeadlockTest, OffTakesBufferingAsGiven) {
  ClusterOptions options = GetParam().options();
  options.send_mode = SendMode::parse("eager");
  options.find_latent_deadlocks = false;
  EXPECT_TRUE(run_ok(run_ranks(options, exchange)));
}

//! Rendezvous sends need no such check: the exchange deadlocks for real (exit 3).
TEST_P(LatentDeadlockTest, RendezvousDeadlocksForReal) {
  EXPECT_EQ(run(exchange, "rendezvous").status, RunStatus::deadlock);
}

//! Sends that complete long before their receives are posted are no deadlock: rank 0 sends
//! three messages, rank 1 receives them in the same order; a ring of isends; a chain of
//! blocking receive-then-send in one direction. All ok under eager.
TEST_P(LatentDeadlockTest, SendsAheadOfTheirReceivesAreSafe) {
  const RunReport report = run([](Communicator& world) {
    const int me = world.rank();
    const int n = world.size();
    std::int32_t v = me;
    if (me == 0) {
      for (int tag = 0; tag < 3; ++tag) world.send(std::span<const std::int32_t>(&v, 1), 1, tag);
    } else if (me == 1) {
      for (int tag = 0; tag < 3; ++tag) world.recv(std::span(&v, 1), 0, tag);
    }
    // A ring: isend to the next, receive from the previous, then wait.
    std::int32_t got = -1;
    Work w = world.isend(std::span<const std::int32_t>(&v, 1), (me + 1) % n, 7);
    world.recv(std::span(&got, 1), (me + n - 1) % n, 7);
    w.wait();
    // A chain: each rank receives from the previous one, then sends to the next.
    if (me > 0) world.recv(std::span(&got, 1), me - 1, 8);
    if (me + 1 < n) world.send(std::span<const std::int32_t>(&v, 1), me + 1, 8);
    world.barrier();
  });
  EXPECT_TRUE(run_ok(report));
}

//! Receiving in the reverse order of the sends' tags is unsafe: rank 0's first send waits for
//! rank 1's last receive, which waits for rank 0's last send. Twice the same pattern (the
//! sends of tags 0 and 1 come from one line).
TEST_P(LatentDeadlockTest, ReverseTagOrderIsAPotentialDeadlock) {
  const RunReport report = run([](Communicator& world) {
    std::int32_t v = world.rank();
    if (world.rank() == 0) {
      for (int tag = 0; tag < 3; ++tag) world.send(std::span<const std::int32_t>(&v, 1), 1, tag);
    } else if (world.rank() == 1) {
      for (int tag = 2; tag >= 0; --tag) world.recv(std::span(&v, 1), 0, tag);
    }
  });
  ASSERT_EQ(report.status, RunStatus::unsafe) << report.summary;
  EXPECT_TRUE(contains(report.details, "(2 times)")) << report.details;
  EXPECT_TRUE(contains(report.culprit.text, "rank 0's send to rank 1 tag 0")) << report.culprit.text;
}

//! A cycle through a collective: rank 0's send is received by rank 1 only after a barrier
//! that rank 0 joins only once its send completes. Buffered, it passes; under rendezvous
//! rank 0 waits in its send, rank 1 in the barrier: a potential deadlock.
TEST_P(LatentDeadlockTest, CycleThroughACollective) {
  const RunReport report = run([](Communicator& world) {
    std::int32_t v = world.rank();
    if (world.rank() == 0) world.send(std::span<const std::int32_t>(&v, 1), 1, 0);
    world.barrier();
    if (world.rank() == 1) world.recv(std::span(&v, 1), 0, 0);
  });
  ASSERT_EQ(report.status, RunStatus::unsafe) << report.summary << "\n" << report.details;
  EXPECT_TRUE(contains(report.details, "barrier #0 in world")) << report.details;
  EXPECT_TRUE(contains(report.culprit.text, "rank 0's send to rank 1")) << report.culprit.text;
}

//! A loop repeating the exchange is one pattern, counted, not one report per iteration; and
//! the virtual run goes on past it, so a later, different pattern is reported too.
TEST_P(LatentDeadlockTest, RepeatsAreCountedAndLaterPatternsFound) {
  const RunReport report = run([](Communicator& world) {
    const int me = world.rank();
    if (me > 1) return;
    std::int32_t v = me;
    for (int i = 0; i < 5; ++i) {
      world.send(std::span<const std::int32_t>(&v, 1), 1 - me, 0);
      world.recv(std::span(&v, 1), 1 - me, 0);
    }
    world.send(std::span<const std::int32_t>(&v, 1), 1 - me, 1);  // a second pattern
    world.recv(std::span(&v, 1), 1 - me, 1);
  });
  ASSERT_EQ(report.status, RunStatus::unsafe) << report.summary;
  EXPECT_TRUE(contains(report.details, "(5 times)")) << report.details;
  EXPECT_TRUE(contains(report.summary, "2 patterns")) << report.summary;
}

//! A buffered send that no receive ever takes completes under eager and blocks for good
//! under rendezvous: reported as a lost message.
TEST_P(LatentDeadlockTest, SendNobodyReceives) {
  const RunReport report = run([](Communicator& world) {
    std::int32_t v = 1;
    if (world.rank() == 0) world.send(std::span<const std::int32_t>(&v, 1), 1, 3);
  });
  ASSERT_EQ(report.status, RunStatus::unsafe) << report.summary;
  EXPECT_TRUE(contains(report.details, "lost message")) << report.details;
  EXPECT_TRUE(contains(report.culprit.text, "no receive takes it")) << report.culprit.text;
}

//! eager<=BYTES buffers only small messages: the exchange of 4 bytes under eager<=4 is a
//! potential deadlock.
TEST_P(LatentDeadlockTest, EagerLimit) {
  EXPECT_EQ(run(exchange, "eager<=4").status, RunStatus::unsafe);
}

//! A fault plan leaves the check on (it was off under any --fault, even one that never
//! fired, without a word): a delay or a kill that never comes leaves the exchange a
//! potential deadlock; a kill that comes fails the run, as without the check.
TEST_P(LatentDeadlockTest, FaultsKeepTheCheck) {
  const auto run_with = [this](const char* fault) {
    ClusterOptions options = GetParam().options();
    options.send_mode = SendMode::parse("eager");
    options.faults.faults.push_back(FaultSpec::parse(fault));
    return run_ranks(options, exchange);
  };
  for (const char* fault : {"delay:0@0:3", "delay:1@1:5", "kill:0@99"}) {
    const RunReport report = run_with(fault);
    EXPECT_EQ(report.status, RunStatus::unsafe) << fault << ": " << report.summary;
    EXPECT_EQ(report.culprit.kind, CulpritKind::potential_deadlock) << fault;
  }
  EXPECT_EQ(run_with("kill:1@0").status, RunStatus::rank_failed);
}

INSTANTIATE_TEST_SUITE_P(Worlds, LatentDeadlockTest,
                         ::testing::ValuesIn(cluster_params({2, 3, 8})), ParamName());

// One rank, under every policy and thread count: the exchange's pattern with itself.
class LatentDeadlockOneRankTest : public ::testing::TestWithParam<ClusterParam> {
 protected:
  RunReport run(const std::function<void(Communicator&)>& fn, const char* send_mode) const {
    ClusterOptions options = GetParam().options();
    options.send_mode = SendMode::parse(send_mode);
    return run_ranks(options, fn);
  }
};

//! A rank that sends to itself before it posts the receive finishes under eager only because
//! the send was buffered: unsafe, the cycle 0 -> 0 (rendezvous deadlocks for real). Posting
//! the receive first is safe under both.
TEST_P(LatentDeadlockOneRankTest, SendToItselfBeforeItsReceive) {
  const auto send_first = [](Communicator& world) {
    const std::int32_t mine = 5;
    std::int32_t got = -1;
    world.send(std::span(&mine, 1), 0, /*tag=*/0);
    world.recv(std::span(&got, 1), 0, /*tag=*/0);
    EXPECT_EQ(got, 5);
  };
  const RunReport report = run(send_first, "eager");
  ASSERT_EQ(report.status, RunStatus::unsafe) << report.summary << "\n" << report.details;
  EXPECT_EQ(report.culprit.kind, CulpritKind::potential_deadlock);
  EXPECT_EQ(report.culprit.ranks, std::vector<int>{0});
  EXPECT_TRUE(contains(report.culprit.text, "rank 0's send to rank 0 tag 0"))
      << report.culprit.text;
  EXPECT_TRUE(contains(report.details, "cycle 0 -> 0")) << report.details;
  EXPECT_EQ(run(send_first, "rendezvous").status, RunStatus::deadlock);

  const auto receive_first = [](Communicator& world) {
    const std::int32_t mine = 5;
    std::int32_t got = -1;
    Work recv = world.irecv(std::span(&got, 1), 0, /*tag=*/0);
    world.send(std::span(&mine, 1), 0, /*tag=*/0);
    recv.wait();
    EXPECT_EQ(got, 5);
  };
  EXPECT_TRUE(run_ok(run(receive_first, "eager")));
  EXPECT_TRUE(run_ok(run(receive_first, "rendezvous")));
}

INSTANTIATE_TEST_SUITE_P(OneRank, LatentDeadlockOneRankTest,
                         ::testing::ValuesIn(cluster_params({1})), ParamName());

}  // namespace
}  // namespace ranklab::testing
