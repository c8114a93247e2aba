// Fingerprints: members of a collective that disagree fail with a side-by-side table
// blaming the calls that differ from the plurality's (exit 4), whatever the algorithm; ranks
// that call collectives of two groups in opposite orders are reported as a mismatch too.
#include <string>

#include <fmt/format.h>

#include "tests/collectives/grid.hpp"

namespace ranklab::testing {
namespace {

// Runs `fn` on `world` ranks, expects a mismatch and returns the report's details.
std::string expect_mismatch(int world, const std::function<void(Communicator&)>& fn, int culprit) {
  const RunReport report = run_ranks(ClusterOptions{.world_size = world}, fn);
  EXPECT_EQ(report.status, RunStatus::mismatch) << report.summary << "\n" << report.details;
  EXPECT_EQ(exit_code(report.status), 4);
  EXPECT_EQ(report.root_cause_rank, culprit) << report.details;
  return report.details;
}

/// Where this file's line `line` is in a mismatch table row: "at FILE:LINE (TestBody)".
std::string site_at(int line) {
  return fmt::format(" at tests/collectives/fingerprint_test.cpp:{} (TestBody)", line);
}

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "expected to find: " << part << "\nin:\n"
                                                << text;
}

class FingerprintTest : public ::testing::TestWithParam<Algorithm> {};

//! A count that differs on one rank: the table lists every call and marks that rank.
TEST_P(FingerprintTest, CountMismatchNamesTheRank) {
  const Algorithm algorithm = GetParam();
  const std::string details = expect_mismatch(
      4,
      [&](Communicator& comm) {
        std::vector<float> data(comm.rank() == 2 ? 16 : 8, 1.0f);
        comm.all_reduce(std::span<float>(data), {.algorithm = algorithm});
      },
      /*culprit=*/2);
  expect_contains(details, "collective mismatch in world collective #0: the members' calls differ");
  expect_contains(details, "all_reduce(sum, f32, count=8)");
  expect_contains(details, "all_reduce(sum, f32, count=16)" + site_at(41) + "   <-- differs");
  // Every member runs the same algorithm: the report does not name it.
  EXPECT_EQ(details.find(" via "), std::string::npos) << details;
  expect_contains(details, "\nrank 2 is the odd one: 1 rank vs 3");
}

//! Different ops, reduce ops and dtypes are caught the same way.
TEST_P(FingerprintTest, OpReduceOpAndDtypeMismatches) {
  const Algorithm algorithm = GetParam();
  const std::string op = expect_mismatch(
      3,
      [&](Communicator& comm) {
        std::vector<float> data(4, 1.0f);
        if (comm.rank() == 1) {
          comm.broadcast(std::span<float>(data));
        } else {
          comm.all_reduce(std::span<float>(data), {.algorithm = algorithm});
        }
      },
      /*culprit=*/1);
  // The algorithm is named where the calls differ in it too (broadcast's default, direct).
  const std::string via = algorithm == Algorithm::direct ? "" : " via direct";
  expect_contains(op, "broadcast(f32, count=4, root=0)" + via + site_at(60) + "   <-- differs");
  const std::string reduce_op = expect_mismatch(
      3,
      [&](Communicator& comm) {
        std::vector<float> data(4, 1.0f);
        const ReduceOp which = comm.rank() == 2 ? ReduceOp::max : ReduceOp::sum;
        comm.all_reduce(std::span<float>(data), {.op = which, .algorithm = algorithm});
      },
      /*culprit=*/2);
  expect_contains(reduce_op, "all_reduce(max, f32, count=4)");
  const std::string dtype = expect_mismatch(
      2,
      [&](Communicator& comm) {
        std::vector<double> wide(4, 1.0);
        std::vector<float> narrow(4, 1.0f);
        if (comm.rank() == 1) {
          comm.all_reduce(std::span<double>(wide), {.algorithm = algorithm});
        } else {
          comm.all_reduce(std::span<float>(narrow), {.algorithm = algorithm});
        }
      },
      /*culprit=*/0);  // one against one: no plurality, rank 0 named first
  expect_contains(dtype, "all_reduce(sum, f64, count=4)");
  expect_contains(dtype, "\nno call has a plurality: rank 0 vs rank 1");
}

//! Members that disagree on the algorithm would wait forever: a mismatch instead.
TEST_P(FingerprintTest, AlgorithmMismatch) {
  const Algorithm algorithm = GetParam();
  const Algorithm other = algorithm == Algorithm::direct ? Algorithm::ring : Algorithm::direct;
  const std::string details = expect_mismatch(
      3,
      [&](Communicator& comm) {
        std::vector<float> data(4, 1.0f);
        comm.all_reduce(std::span<float>(data),
                        {.algorithm = comm.rank() == 1 ? other : algorithm});
      },
      /*culprit=*/1);
  expect_contains(details, "via " + std::string(to_string(other)) + site_at(102) + "   <-- differs");
}

//! Two ranks calling collectives of groups a and b in opposite orders: exit 4, naming both
//! groups and the first rank that differs, not a bare deadlock.
TEST_P(FingerprintTest, OppositeOrderAcrossGroups) {
  const Algorithm algorithm = GetParam();
  const std::string details = expect_mismatch(
      2,
      [&](Communicator& comm) {
        const int pair[] = {0, 1};
        Communicator a = comm.new_group(pair, "a");
        Communicator b = comm.new_group(pair, "b");
        std::vector<float> data(4, 1.0f);
        Communicator& first = comm.rank() == 0 ? a : b;
        Communicator& second = comm.rank() == 0 ? b : a;
        first.all_reduce(std::span<float>(data), {.algorithm = algorithm});
        second.all_reduce(std::span<float>(data), {.algorithm = algorithm});
      },
      /*culprit=*/1);
  expect_contains(details,
                  "collective order mismatch: ranks call collectives on a[0,1] and b[0,1]");
  expect_contains(details, "b[0,1] #0: all_reduce(sum, f32, count=4)   <-- differs");
  expect_contains(details, "first rank that differs: 1");
}

//! The same with a larger world: a pair group and the world, three bystanders waiting.
TEST_P(FingerprintTest, OppositeOrderBetweenSubgroupAndWorld) {
  const Algorithm algorithm = GetParam();
  const std::string details = expect_mismatch(
      5,
      [&](Communicator& comm) {
        const int pair[] = {0, 1};
        Communicator tp = comm.new_group(pair, "tp");
        std::vector<float> data(4, 1.0f);
        if (comm.rank() == 1) comm.all_reduce(std::span<float>(data), {.algorithm = algorithm});
        if (tp.is_member()) tp.all_reduce(std::span<float>(data), {.algorithm = algorithm});
        if (comm.rank() != 1) comm.all_reduce(std::span<float>(data), {.algorithm = algorithm});
      },
      /*culprit=*/1);
  expect_contains(details, "tp[0,1] and world");
}

INSTANTIATE_TEST_SUITE_P(Algorithms, FingerprintTest,
                         ::testing::Values(Algorithm::direct, Algorithm::ring,
                                           Algorithm::recursive_doubling),
                         [](const ::testing::TestParamInfo<Algorithm>& algorithm) {
                           std::string name(to_string(algorithm.param));
                           for (char& c : name) c = c == '-' ? '_' : c;
                           return name;
                         });

//! A root that differs is a mismatch for tree algorithms too.
TEST(FingerprintRoots, TreeBroadcastRootMismatch) {
  const std::string details = expect_mismatch(
      4,
      [](Communicator& comm) {
        std::vector<std::int32_t> data(3, 1);
        comm.broadcast(std::span<std::int32_t>(data),
                       {.root = comm.rank() == 3 ? 1 : 0, .algorithm = Algorithm::tree});
      },
      /*culprit=*/3);
  expect_contains(details, "broadcast(i32, count=3, root=1)" + site_at(164) + "   <-- differs");
}

//! Non-blocking direct collectives started in opposite orders are legal (MPI-3) and must
//! complete: the order check only speaks when the run would otherwise deadlock.
TEST(FingerprintOrder, NonBlockingOppositeOrderCompletes) {
  expect_run_ok(ClusterOptions{.world_size = 2}, [](Communicator& comm) {
    const int pair[] = {0, 1};
    Communicator a = comm.new_group(pair, "a");
    Communicator b = comm.new_group(pair, "b");
    std::vector<float> x(4, 1.0f), y(4, 2.0f);
    Communicator& first = comm.rank() == 0 ? a : b;
    Communicator& second = comm.rank() == 0 ? b : a;
    Work w1 = first.iall_reduce(as_mutable_buffer(std::span<float>(comm.rank() == 0 ? x : y)));
    Work w2 = second.iall_reduce(as_mutable_buffer(std::span<float>(comm.rank() == 0 ? y : x)));
    w1.wait();
    w2.wait();
    EXPECT_EQ(x[0], 2.0f);
    EXPECT_EQ(y[0], 4.0f);
  });
}

//! A cycle through a user receive is an ordinary deadlock (exit 3), not a mismatch.
TEST(FingerprintOrder, CollectiveAgainstUserReceiveIsADeadlock) {
  const RunReport report = run_ranks(ClusterOptions{.world_size = 2}, [](Communicator& comm) {
    std::vector<float> data(4, 1.0f);
    if (comm.rank() == 0) {
      comm.all_reduce(std::span<float>(data), {.algorithm = Algorithm::ring});
    } else {
      comm.recv(std::span<float>(data), 0, /*tag=*/5);
    }
  });
  EXPECT_EQ(report.status, RunStatus::deadlock) << report.details;
}

}  // namespace
}  // namespace ranklab::testing
