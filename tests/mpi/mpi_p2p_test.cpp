// Point-to-point semantics on Open MPI, and the failures the backend turns into ranklab's
// exceptions: any-source and any-tag receives with their status, wildcard receives that
// never take a collective's message, messages whose two sides disagree (reported as the
// emulator reports them), fingerprint mismatches (--check-collectives) and timeouts.
#include <gtest/gtest.h>

#include <gmock/gmock.h>

#include <fmt/format.h>

#include <functional>
#include <string>
#include <vector>

#include "collectives/cluster.hpp"
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

// Rank 0 sends `sent` elements of S to rank 1 (tag 7), which receives into `capacity`
// elements of R: a mismatch when the types or sizes disagree.
template <typename S, typename R>
void send_into(Communicator& comm, std::size_t sent, std::size_t capacity) {
  if (comm.rank() == 0) {
    const std::vector<S> out(sent, S{1});
    comm.send(std::span<const S>(out), 1, 7);
  } else if (comm.rank() == 1) {
    std::vector<R> in(capacity);
    comm.recv(std::span(in), 0, 7);
  }
}

// The emulator's one line for `program` on two ranks, which must end with a message mismatch.
std::string emulator_line(const std::function<void(Communicator&)>& program) {
  Cluster cluster({.world_size = 2});
  const RunReport report = cluster.run(program);
  EXPECT_EQ(report.status, RunStatus::mismatch) << report.summary;
  EXPECT_EQ(report.culprit.kind, CulpritKind::message_mismatch);
  return report.culprit.text;
}

// What rank 1's receive throws on MPI for `program` (numbered from 0 as a run: the
// recording restarts the numbering); empty on the other ranks.
std::string mpi_line(const std::function<void(Communicator&)>& program) {
  session().record_trace();
  std::string line;
  {
    Communicator world = session().world();
    try {
      if (world.size() >= 2) program(world);
    } catch (const MismatchError& e) {
      line = e.what();
    }
  }
  (void)session().trace_of_job({});
  return line;
}

// What each bad point-to-point call throws, in order ("no error" where none).
std::vector<std::string> bad_argument_errors(Communicator& world) {
  const int n = world.size();
  std::int32_t v = world.rank();
  std::vector<std::string> errors;
  const auto call = [&errors](const std::function<void()>& bad) {
    try {
      bad();
      errors.emplace_back("no error");
    } catch (const UsageError& e) {
      errors.emplace_back(e.what());
    }
  };
  call([&] { world.send(std::span<const std::int32_t>(&v, 1), n, 0); });
  call([&] { (void)world.recv(std::span(&v, 1), -5, 0); });
  call([&] { world.send(ConstBuffer{nullptr, 2, DataType::i32}, 0, 0); });
  call([&] { (void)world.recv(MutableBuffer{nullptr, 2, DataType::i32}, 0, 0); });
  call([&] { (void)world.global_rank(n); });
  return errors;
}

//! Bad point-to-point arguments (peer, count, group rank) are UsageErrors in the caller in
//! the emulator's words, message for message (the Communicator checks them for every
//! backend), and leave the job intact.
TEST(MpiP2p, BadArgumentsReadAsTheEmulatorsErrors) {
  Communicator world = session().world();
  const int me = world.rank();
  const int n = world.size();
  const std::vector<std::string> got = bad_argument_errors(world);
  std::vector<std::vector<std::string>> emulated(static_cast<std::size_t>(n));
  run_on_emulator([&](Communicator& c) {
    emulated[static_cast<std::size_t>(c.rank())] = bad_argument_errors(c);
  });
  EXPECT_EQ(got, emulated[static_cast<std::size_t>(me)]);
  ASSERT_EQ(got.size(), 5u);
  using ::testing::HasSubstr;
  EXPECT_THAT(got[0], HasSubstr(fmt::format(
                          "rank {}: send to rank {} of group world, which has {} ranks", me, n, n)));
  EXPECT_THAT(got[1], HasSubstr(fmt::format(
                          "rank {}: recv from rank -5 of group world, which has {} ranks", me, n)));
  EXPECT_THAT(got[2], HasSubstr(fmt::format("rank {}: send of a null buffer", me)));
  EXPECT_THAT(got[3], HasSubstr(fmt::format("rank {}: recv into a null buffer", me)));
  EXPECT_THAT(got[4], HasSubstr(fmt::format("rank {} is outside group world of {} ranks", n, n)));
  world.barrier();
}

//! The two sides of a message disagree: the receiver's MismatchError is the emulator's line,
//! both sides named (types first, then size; a float sent into a double buffer of the same
//! bytes is caught, which MPI alone does not see).
TEST(MpiP2p, MismatchedMessagesReadAsTheEmulatorReportsThem) {
  if (session().size() < 2) GTEST_SKIP() << "needs two ranks";
  const std::vector<std::function<void(Communicator&)>> programs = {
      [](Communicator& c) { send_into<float, double>(c, 4, 2); },   // same bytes, other type
      [](Communicator& c) { send_into<float, double>(c, 4, 4); },   // fits, other type
      [](Communicator& c) { send_into<std::int32_t, std::int32_t>(c, 10, 5); },  // too large
      [](Communicator& c) { send_into<std::uint8_t, float>(c, 3, 4); },  // ragged bytes
      // Above the staging size: sent and received in place (a derived datatype).
      [](Communicator& c) { send_into<double, double>(c, 40000, 30000); },
      [](Communicator& c) { send_into<double, float>(c, 20000, 40000); },
  };
  for (std::size_t i = 0; i < programs.size(); ++i) {
    const std::string got = mpi_line(programs[i]);
    if (session().rank() != 1) {
      EXPECT_EQ(got, "") << "program " << i;
      continue;
    }
    EXPECT_EQ(got, emulator_line(programs[i])) << "program " << i;
  }
}

//! Without a recording too: a float sent into a double buffer is a mismatch naming both
//! calls, and the messages that match still arrive whole, in place or staged.
TEST(MpiP2p, ElementTypesAreCheckedWithoutARecording) {
  Communicator world = session().world();
  if (world.size() < 2) GTEST_SKIP() << "needs two ranks";
  if (world.rank() == 1) {
    try {
      send_into<float, double>(world, 2, 1);
      ADD_FAILURE() << "no MismatchError";
    } catch (const MismatchError& e) {
      EXPECT_THAT(e.what(), ::testing::MatchesRegex(
                                "message mismatch in world: rank 0 \\(op #[0-9]+\\) sends 2 x f32 "
                                "to rank 1 tag 7; rank 1 \\(op #[0-9]+\\) receives into 1 x f64 "
                                "from rank 0 tag 7: the element types differ"));
    }
  } else {
    send_into<float, double>(world, 2, 1);
  }
  for (const std::size_t n : {std::size_t{3}, std::size_t{100000}}) {
    if (world.rank() == 0) {
      std::vector<double> out(n);
      for (std::size_t i = 0; i < n; ++i) out[i] = 0.5 * static_cast<double>(i);
      world.send(std::span<const double>(out), 1, 8);
    } else if (world.rank() == 1) {
      std::vector<double> in(n + 1, -1.0);
      const RecvStatus status = world.recv(std::span(in), 0, 8);
      EXPECT_EQ(status.count, n);
      EXPECT_EQ(in[n - 1], 0.5 * static_cast<double>(n - 1));
      EXPECT_EQ(in[n], -1.0);
    }
  }
  world.barrier();
}

//! --check-collectives: members that disagree on the element type fail every member with
//! the table, both calls named.
TEST(MpiP2p, CheckCollectivesReportsADtypeMismatchOnEveryMember) {
  Communicator checked(make_mpi_backend({.check_collectives = true}), Algorithm::direct);
  if (checked.size() < 2) GTEST_SKIP() << "needs two ranks";
  std::vector<float> floats(4, 1.0f);
  std::vector<double> doubles(4, 1.0);
  try {
    if (checked.rank() == 1) {
      checked.all_reduce(std::span(doubles));
    } else {
      checked.all_reduce(std::span(floats));
    }
    ADD_FAILURE() << "no CollectiveMismatchError";
  } catch (const CollectiveMismatchError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("all_reduce(sum, f64, count=4)"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("all_reduce(sum, f32, count=4)"));
    // Rank 1 is the odd one out of three or more; of two, neither call has a plurality.
    EXPECT_THAT(e.sentence(),
                ::testing::HasSubstr(checked.size() > 2
                                         ? "rank 1 called all_reduce(sum, f64, count=4) "
                                           "where rank"
                                         : "no call has a plurality in world collective #1: rank 0 "
                                           "called all_reduce(sum, f32, count=4); rank 1 "
                                           "called all_reduce(sum, f64, count=4)"));
  }
  checked.barrier();
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
    // The emulator's watchdog's words, the call site included.
    const int line = __LINE__ + 2;
    try {
      static_cast<void>(timed.recv(std::span(&never, 1), kAnySource, 9));
      ADD_FAILURE() << "the receive did not time out";
    } catch (const TimeoutError& e) {
      EXPECT_THAT(e.what(), ::testing::MatchesRegex(fmt::format(
                                "rank 0 waited more than 200 ms in recv from any source tag 9 in "
                                "world \\(1 x i32\\), op #[0-9]+ at "
                                "tests/mpi/mpi_p2p_test.cpp:{} \\(TestBody\\)",
                                line)));
    }
  }
  session().world().barrier();  // the others wait longer than 200 ms for rank 0 here
}

}  // namespace
}  // namespace ranklab::testing
