// The Launcher interface on the emulator (EmulatorLauncher): one run of a rank program with
// the options every launcher shares, and what comes back: the report, the trace when asked
// for (its header's config as given), each rank's bytes by rank. The MPI launcher's own test
// runs the same program on both (tests/mpi/mpi_trace_test.cpp).
#include "collectives/cluster.hpp"

#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

#include "comm/errors.hpp"
#include "tests/support/expect_throw_msg.hpp"

namespace ranklab {
namespace {

ClusterOptions world_of(int n) {
  ClusterOptions options;
  options.world_size = n;
  return options;
}

// A ring exchange, then each rank's bytes: its rank and the value it received.
std::string ring_program(Communicator& world) {
  const int me = world.rank();
  const int n = world.size();
  const std::int32_t out = 10 * me;
  std::int32_t in = -1;
  Work received = world.irecv(std::span(&in, 1), (me + n - 1) % n, 1);
  world.send(std::span<const std::int32_t>(&out, 1), (me + 1) % n, 1);
  received.wait();
  return std::to_string(me) + ":" + std::to_string(in);
}

//! run_gathering hands back every rank's bytes by rank; the run is ok and, recorded, its
//! trace's header holds the config given (and the world size).
TEST(EmulatorLauncherTest, GathersEachRanksBytesAndRecordsTheTrace) {
  EmulatorLauncher launcher(world_of(4));
  EXPECT_EQ(launcher.world_size(), 4);
  EXPECT_EQ(launcher.device(), DeviceKind::cpu);
  EXPECT_EQ(launcher.local_ranks(), 4);
  const LaunchOptions options{.algorithm = Algorithm::ring,
                              .record = true,
                              .trace_config = {{"program", "launcher-test"}}};
  const Launched run = launcher.run_gathering(options, ring_program);
  ASSERT_TRUE(run.report.ok()) << run.report.summary;
  EXPECT_TRUE(run.has_results);
  EXPECT_EQ(run.results, (std::vector<std::string>{"0:30", "1:0", "2:10", "3:20"}));
  EXPECT_EQ(run.trace.header.world_size, 4);
  EXPECT_EQ(run.trace.header.config.value("program", ""), "launcher-test");
  ASSERT_EQ(run.trace.ranks.size(), 4u);
  EXPECT_GE(run.trace.ranks[0].size(), 2u);  // a send and a receive
  EXPECT_GE(run.ms, 0.0);
}

//! A launcher runs again with fresh state; a run without recording has no trace, and one
//! whose program returns nothing has no results.
TEST(EmulatorLauncherTest, RunsAgainWithoutTraceOrResults) {
  EmulatorLauncher launcher(world_of(3));
  int calls = 0;
  std::mutex mutex;
  for (int round = 0; round < 2; ++round) {
    const Launched run = launcher.run({}, [&](Communicator& world) {
      world.barrier();
      const std::lock_guard lock(mutex);
      ++calls;
    });
    EXPECT_TRUE(run.report.ok()) << run.report.summary;
    EXPECT_TRUE(run.results.empty());
    EXPECT_TRUE(run.trace.ranks.empty());
  }
  EXPECT_EQ(calls, 6);
}

//! The world's default algorithm is the LaunchOptions' one (`automatic` fails every rank),
//! and a rank's failure is reported, not thrown; its bytes are empty.
TEST(EmulatorLauncherTest, ReportsFailuresAndTakesTheWorldsAlgorithm) {
  EmulatorLauncher launcher(world_of(2));
  const Launched automatic = launcher.run({.algorithm = Algorithm::automatic},
                                          [](Communicator&) {});
  EXPECT_EQ(automatic.report.status, RunStatus::rank_failed);
  const Launched failed = launcher.run_gathering({}, [](Communicator& world) -> std::string {
    if (world.rank() == 1) throw Error("rank 1 gives up");
    return "done";
  });
  EXPECT_EQ(failed.report.status, RunStatus::rank_failed);
  ASSERT_EQ(failed.results.size(), 2u);
  EXPECT_EQ(failed.results[1], "");
}

//! A configuration that cannot run is a UsageError when the launcher is made.
TEST(EmulatorLauncherTest, RefusesAnImpossibleConfiguration) {
  EXPECT_THROW_MSG(EmulatorLauncher(world_of(0)), UsageError, "world size must be at least 1");
}

}  // namespace
}  // namespace ranklab
