// The rules at the edges of the communicator: point-to-point pairs that disagree, the
// reserved tag range, all_to_all_v counts that disagree, and algorithm selection.
#include <string>

#include "collectives/algorithms/algorithm.hpp"
#include "collectives/tags.hpp"
#include "comm/errors.hpp"
#include "tests/collectives/grid.hpp"
#include "tests/support/expect_throw_msg.hpp"

namespace ranklab::testing {
namespace {

RunReport run_two(const std::function<void(Communicator&)>& fn, int world = 2) {
  return run_ranks(ClusterOptions{.world_size = world}, fn);
}

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "expected to find: " << part << "\nin:\n"
                                                << text;
}

//! A receive buffer smaller than the message fails both sides, naming both.
TEST(PointToPoint, SmallerReceiveBufferIsAMismatch) {
  const RunReport report = run_two([](Communicator& comm) {
    std::vector<float> data(comm.rank() == 0 ? 8 : 4, 1.0f);
    if (comm.rank() == 0) comm.send(std::span<const float>(data), 1, 3);
    if (comm.rank() == 1) comm.recv(std::span<float>(data), 0, 3);
  });
  EXPECT_EQ(report.status, RunStatus::mismatch) << report.details;
  expect_contains(report.details, "rank 0 (op #0) sends 8 x f32 to rank 1 tag 3");
  expect_contains(report.details, "rank 1 (op #0) receives into 4 x f32 from rank 0 tag 3");
}

//! Element types that differ fail both sides, naming both.
TEST(PointToPoint, DifferentElementTypesAreAMismatch) {
  const RunReport report = run_two([](Communicator& comm) {
    std::vector<float> f(4, 1.0f);
    std::vector<std::int32_t> i(4, 1);
    if (comm.rank() == 0) comm.send(std::span<const float>(f), 1);
    if (comm.rank() == 1) comm.recv(std::span<std::int32_t>(i), 0);
  });
  EXPECT_EQ(report.status, RunStatus::mismatch) << report.details;
  expect_contains(report.details, "the element types differ");
}

//! The rule for larger receive buffers is MPI's: allowed, and status() says how many
//! elements arrived. (Collective algorithms demand exact counts; see below.)
TEST(PointToPoint, LargerReceiveBufferIsAllowed) {
  expect_run_ok(ClusterOptions{.world_size = 2}, [](Communicator& comm) {
    std::vector<double> data(comm.rank() == 0 ? 3 : 10, 2.5);
    if (comm.rank() == 0) comm.send(std::span<const double>(data), 1);
    if (comm.rank() == 1) {
      const RecvStatus status = comm.recv(std::span<double>(data), 0);
      EXPECT_EQ(status.count, 3u);
      EXPECT_EQ(status.source, 0);
    }
  });
}

//! Tags at or above kFirstReservedTag belong to collectives; user calls are refused.
TEST(PointToPoint, ReservedTagsAreRefused) {
  for (const int tag : {kFirstReservedTag, collective_tag(5), -3}) {
    const RunReport report = run_two([&](Communicator& comm) {
      std::vector<float> data(1);
      if (comm.rank() == 0) comm.send(std::span<const float>(data), 1, tag);
      if (comm.rank() == 1) comm.recv(std::span<float>(data), 0, tag);
    });
    EXPECT_EQ(report.status, RunStatus::rank_failed);
    EXPECT_THROW_MSG(report.rethrow_if_failed(), UsageError, "reserved for collectives");
  }
  EXPECT_EQ(collective_tag(0), kFirstReservedTag);
  EXPECT_EQ(collective_tag((std::uint64_t{1} << 30) + 7), kFirstReservedTag + 7);  // wraps
}

//! User messages and a point-to-point collective in flight on the same group do not mix:
//! a user message posted before the collective is received after it.
TEST(PointToPoint, UserMessagesDoNotMatchCollectiveMessages) {
  expect_run_ok(ClusterOptions{.world_size = 3}, [](Communicator& comm) {
    std::vector<float> note(2, static_cast<float>(comm.rank() + 100));
    std::vector<float> data(5, 1.0f);
    const int right = (comm.rank() + 1) % 3, left = (comm.rank() + 2) % 3;
    Work sent = comm.isend(std::span<const float>(note), right, /*tag=*/0);
    comm.all_reduce(std::span<float>(data), {.algorithm = Algorithm::ring});
    std::vector<float> got(2);
    comm.recv(std::span<float>(got), left, 0);
    sent.wait();
    EXPECT_EQ(got[0], static_cast<float>(left + 100));
    EXPECT_EQ(data[4], 3.0f);
  });
}

//! all_to_all_v: a receiver expecting more than its peer sends fails naming both ranks.
TEST(AllToAllV, CountsThatDisagreeNameBothRanks) {
  const RunReport report = run_two([](Communicator& comm) {
    // Rank 0 sends 3 elements to rank 1, which expects 4.
    const std::vector<std::size_t> send =
        comm.rank() == 0 ? std::vector<std::size_t>{1, 3} : std::vector<std::size_t>{2, 1};
    const std::vector<std::size_t> recv =
        comm.rank() == 0 ? std::vector<std::size_t>{1, 2} : std::vector<std::size_t>{4, 1};
    std::vector<float> in(send[0] + send[1], 1.0f), out(recv[0] + recv[1]);
    comm.all_to_all_v(as_buffer(std::span<const float>(in)), send,
                      as_mutable_buffer(std::span<float>(out)), recv);
  });
  EXPECT_EQ(report.status, RunStatus::mismatch) << report.details;
  expect_contains(report.details,
                  "all_to_all_v via pairwise in world: rank 1 expected 4 x f32 from rank 0");
  expect_contains(report.details, "but rank 0 sent 3");
}

//! all_to_all_v checks its counts against its buffers before sending anything.
TEST(AllToAllV, CountsMustMatchTheBuffers) {
  const RunReport report = run_two([](Communicator& comm) {
    const std::vector<std::size_t> counts{1, 1};
    std::vector<float> in(3), out(2);
    comm.all_to_all_v(as_buffer(std::span<const float>(in)), counts,
                      as_mutable_buffer(std::span<float>(out)), counts);
  });
  EXPECT_THROW_MSG(report.rethrow_if_failed(), UsageError, "the counts add up to 2 sent");
}

//! An algorithm asked for by a call must implement the collective.
TEST(Selection, RequestedAlgorithmMustImplementTheCollective) {
  const RunReport report = run_two([](Communicator& comm) {
    std::vector<float> data(2);
    comm.broadcast(std::span<float>(data), {.algorithm = Algorithm::ring});
  });
  EXPECT_THROW_MSG(report.rethrow_if_failed(), UsageError,
                   "algorithm ring does not implement broadcast (it implements all_reduce, "
                   "all_gather, reduce_scatter)");
}

//! A communicator-wide default (--algo ring) applies where it can; other collectives run
//! direct, and a call's own option wins.
TEST(Selection, DefaultAlgorithmFallsBackToDirect) {
  const RunReport report = run_ranks(
      ClusterOptions{.world_size = 4},
      [](Communicator& comm) {
        std::vector<float> data(8, 1.0f);
        comm.broadcast(std::span<float>(data));   // direct
        comm.all_reduce(std::span<float>(data));  // ring
        comm.all_reduce(std::span<float>(data), {.algorithm = Algorithm::direct});
        EXPECT_EQ(data[7], 16.0f);
      },
      Algorithm::ring);
  EXPECT_EQ(report.status, RunStatus::ok) << report.details;
}

//! The resolution rules, directly.
TEST(Selection, ResolveAlgorithm) {
  EXPECT_EQ(resolve_algorithm(OpKind::all_reduce, Algorithm::automatic, Algorithm::ring, 4),
            Algorithm::ring);
  EXPECT_EQ(resolve_algorithm(OpKind::barrier, Algorithm::automatic, Algorithm::ring, 4),
            Algorithm::direct);
  EXPECT_EQ(resolve_algorithm(OpKind::all_reduce, Algorithm::halving_doubling, Algorithm::ring, 1),
            Algorithm::direct);
  EXPECT_THROW(resolve_algorithm(OpKind::gather, Algorithm::pairwise, Algorithm::direct, 4),
               UsageError);
  EXPECT_FALSE(implements(Algorithm::tree, OpKind::send));
}

}  // namespace
}  // namespace ranklab::testing
