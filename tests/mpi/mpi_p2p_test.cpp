// Point-to-point semantics on Open MPI, and the failures the backend turns into ranklab's
// exceptions: any-source and any-tag receives with their status, wildcard receives that
// never take a collective's message, truncated and ragged messages, fingerprint mismatches
// (--check-collectives) and timeouts.
#include <gtest/gtest.h>

#include <gmock/gmock.h>

#include "collectives/mpi/mpi_errors.hpp"
#include "comm/errors.hpp"
#include "tests/mpi/mpi_test_support.hpp"
#include "tests/support/expect_throw_msg.hpp"

namespace ranklab::testing {
namespace {

//! Rank 0 receives from every other rank with kAnySource / kAnyTag into a buffer larger than
//! each message; status() names the sender, its tag and how many elements came.
TEST(MpiP2p, AnySourceAndAnyTagReportTheirStatus) {
  Communicator world = session().world();
  const int me = world.rank();
  const int p = world.size();
  if (me != 0) {
    std::vector<std::int32_t> data(static_cast<std::size_t>(me), me);
    world.send(std::span<const std::int32_t>(data), 0, 100 + me);
  } else {
    std::vector<bool> seen(static_cast<std::size_t>(p), false);
    for (int k = 1; k < p; ++k) {
      std::vector<std::int32_t> buffer(static_cast<std::size_t>(p), -1);
      const RecvStatus status = world.recv(std::span(buffer), kAnySource, kAnyTag);
      ASSERT_GT(status.source, 0);
      EXPECT_FALSE(seen[static_cast<std::size_t>(status.source)]);
      seen[static_cast<std::size_t>(status.source)] = true;
      EXPECT_EQ(status.tag, 100 + status.source);
      EXPECT_EQ(status.count, static_cast<std::size_t>(status.source));
      EXPECT_EQ(buffer[0], status.source);
    }
  }
  world.barrier();
}

//! A wildcard receive posted before a ring all_reduce takes the user's message, not the
//! algorithm's (which travel on the group's internal communicator).
TEST(MpiP2p, WildcardReceiveNeverTakesACollectivesMessage) {
  Communicator world = session().world();
  if (world.size() < 2) GTEST_SKIP() << "needs two ranks";
  const int me = world.rank();
  std::int64_t got = -1;
  Work pending;
  if (me == 1) pending = world.irecv(std::span(&got, 1), kAnySource, kAnyTag);
  std::vector<double> data(10, 1.0 + me);
  world.all_reduce(std::span(data), {ReduceOp::sum, Algorithm::ring});
  const double want = world.size() * (world.size() + 1) / 2.0;
  EXPECT_EQ(data[0], want);
  if (me == 0) {
    const std::int64_t value = 42;
    world.send(std::span(&value, 1), 1, 5);
  }
  if (me == 1) {
    pending.wait();
    EXPECT_EQ(got, 42);
    EXPECT_EQ(pending.status().tag, 5);
    EXPECT_EQ(pending.status().source, 0);
  }
  world.barrier();
}

//! A message larger than the receive buffer fails the receiver with MismatchError; one that
//! is not a whole number of the receiver's elements too.
TEST(MpiP2p, TruncatedAndRaggedMessagesAreMismatches) {
  Communicator world = session().world();
  if (world.size() < 2) GTEST_SKIP() << "needs two ranks";
  const int me = world.rank();
  if (me == 0) {
    const std::vector<std::int32_t> ten(10, 7);
    world.send(std::span<const std::int32_t>(ten), 1, 1);
    const std::vector<std::uint8_t> three(3, 1);
    world.send(std::span<const std::uint8_t>(three), 1, 2);
  } else if (me == 1) {
    std::vector<std::int32_t> five(5);
    EXPECT_THROW_MSG(world.recv(std::span(five), 0, 1), MismatchError,
                     "larger than the receive buffer");
    std::vector<float> floats(4);
    EXPECT_THROW_MSG(world.recv(std::span(floats), 0, 2), MismatchError,
                     "not a whole number of f32");
  }
  world.barrier();
}

//! --check-collectives: a member whose call differs fails every member with the table.
TEST(MpiP2p, CheckCollectivesReportsAMismatchOnEveryMember) {
  Communicator checked(make_mpi_backend({.check_collectives = true}), Algorithm::ring);
  if (checked.size() < 2) GTEST_SKIP() << "needs two ranks";
  std::vector<float> data(checked.rank() == 1 ? 5 : 4, 1.0f);
  try {
    checked.all_reduce(std::span(data));
    ADD_FAILURE() << "no CollectiveMismatchError";
  } catch (const CollectiveMismatchError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("collective mismatch in world collective #"));
    EXPECT_THAT(e.sentence(), ::testing::HasSubstr("rank 1 called all_reduce(sum, f32, count=5)"));
    EXPECT_EQ(e.reporter(), checked.rank() == 0);
  }
  // Agreeing calls go through.
  std::vector<float> same(4, 1.0f);
  checked.all_reduce(std::span(same));
  EXPECT_EQ(same[0], static_cast<float>(checked.size()));
}

//! A wait longer than the timeout throws TimeoutError naming the operation.
TEST(MpiP2p, TimeoutEndsAWaitWithItsOperation) {
  Communicator timed(make_mpi_backend({.timeout = std::chrono::milliseconds(200)}),
                     Algorithm::direct);
  if (timed.rank() == 0) {
    std::int32_t never = 0;
    EXPECT_THROW_MSG(timed.recv(std::span(&never, 1), kAnySource, 9), TimeoutError,
                     "rank 0: recv from any rank tag 9 in world (1 x i32) waited longer than the "
                     "timeout (200 ms)");
  }
  session().world().barrier();  // the others wait longer than 200 ms for rank 0 here
}

}  // namespace
}  // namespace ranklab::testing
