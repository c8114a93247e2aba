// Cluster threads (emulator/cluster_thread.hpp): one-thread clusters run on a thread the
// caller keeps, one after another; a run leaves nothing behind for the next one there.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <stdexcept>
#include <thread>
#include <vector>

#include "emulator/cluster_thread.hpp"
#include "emulator/engine.hpp"
#include "tests/emulator/emulator_test_support.hpp"
#include "tests/support/cluster_fixture.hpp"
#include "tests/support/expect_throw_msg.hpp"
#include "traces/sink.hpp"

namespace ranklab::testing {
namespace {

// Clusters this thread has run ranks of so far: 1 on a fresh thread, more on a kept one.
thread_local int clusters_here = 0;

struct Seen {
  std::thread::id thread;
  int clusters_before = 0;  // on that thread, this one included
};

// Runs a one-thread cluster of `world` ranks and says where its ranks ran.
Seen run_and_see(int world = 3) {
  ClusterOptions options;
  options.world_size = world;
  std::vector<Seen> seen(static_cast<std::size_t>(world));
  Engine engine(options);
  const RunReport report = engine.run([&](RankContext& ctx) {
    if (ctx.rank() == 0) ++clusters_here;
    seen[static_cast<std::size_t>(ctx.rank())] = {std::this_thread::get_id(), clusters_here};
  });
  EXPECT_TRUE(run_ok(report));
  for (const Seen& s : seen) EXPECT_EQ(s.thread, seen[0].thread) << "one thread runs them all";
  return seen[0];
}

// A trace that depends on the policy only: a ring of sends and an all_reduce.
Trace ring_trace(const char* policy) {
  ClusterOptions options;
  options.world_size = 6;
  options.policy = SchedulePolicy::parse(policy);
  auto sink = std::make_shared<MemorySink>();
  options.trace_sink = sink;
  auto log = std::make_shared<ScheduleLog>();
  options.schedule_log = log;
  EXPECT_TRUE(run_ok(run_ranks(options, [](Communicator& world) {
    const int me = world.rank(), n = world.size();
    const std::int64_t mine = me;
    std::int64_t left = -1;
    Work sent = world.isend(std::span(&mine, 1), (me + 1) % n, /*tag=*/0);
    world.recv(std::span(&left, 1), (me + n - 1) % n, /*tag=*/0);
    sent.wait();
    std::vector<float> x = fill<float>(me, 4);
    world.all_reduce(std::span(x));
  })));
  EXPECT_FALSE(log->picks.empty());
  return sink->trace();
}

//! One-thread clusters started one after another from a thread run on one thread of its
//! own, kept between them (not the caller's, not a fresh one each: the thread had run the
//! first cluster when the second started).
TEST(ClusterThreadTest, KeptFromOneClusterToTheNext) {
  const Seen first = run_and_see();
  const Seen second = run_and_see();
  EXPECT_NE(first.thread, std::this_thread::get_id());
  EXPECT_EQ(second.thread, first.thread);
  EXPECT_EQ(second.clusters_before, first.clusters_before + 1);
}

//! Two threads' clusters run on two cluster threads, side by side.
TEST(ClusterThreadTest, EachCallerHasItsOwn) {
  const Seen mine = run_and_see();
  Seen other;
  std::thread caller([&] { other = run_and_see(); });
  caller.join();
  EXPECT_NE(other.thread, mine.thread);
}

//! A run leaves nothing behind for the next on its thread: random, PCT and rank-order runs
//! between a deadlock and a world of a different size give the traces they give first.
TEST(ClusterThreadTest, RunsBetweenOthersGiveTheSameTraces) {
  const Trace random = ring_trace("random:7");
  const Trace pct = ring_trace("pct:3:2");
  ClusterOptions bad;
  bad.world_size = 2;
  const RunReport deadlocked = run_ranks(bad, [](Communicator& world) {
    if (world.rank() == 0) world.barrier();
  });
  EXPECT_EQ(deadlocked.status, RunStatus::deadlock);
  run_and_see(40);
  EXPECT_EQ(ring_trace("pct:3:2"), pct);
  EXPECT_EQ(ring_trace("random:7"), random);
}

//! A cluster started by a rank of another runs on a thread of its own (the rank's thread is
//! busy with its cluster), and both end.
TEST(ClusterThreadTest, ClusterInsideARank) {
  ClusterOptions options;
  options.world_size = 2;
  Engine engine(options);
  std::thread::id outer, inner;
  const RunReport report = engine.run([&](RankContext& ctx) {
    if (ctx.rank() != 0) return;
    outer = std::this_thread::get_id();
    inner = run_and_see().thread;
  });
  EXPECT_TRUE(run_ok(report));
  EXPECT_NE(inner, outer);
}

//! run_on_cluster_thread runs its body on a cluster thread, and the clusters the body starts
//! on that very thread; what the body throws reaches the caller.
TEST(ClusterThreadTest, BodyRunsItsClustersInPlace) {
  std::thread::id body_thread;
  Seen first, second;
  run_on_cluster_thread([&] {
    body_thread = std::this_thread::get_id();
    first = run_and_see();
    second = run_and_see();
  });
  EXPECT_NE(body_thread, std::this_thread::get_id());
  EXPECT_EQ(first.thread, body_thread);
  EXPECT_EQ(second.thread, body_thread);
  EXPECT_THROW_MSG(run_on_cluster_thread([] { throw std::runtime_error("from the body"); }),
                   std::runtime_error, "from the body");
  EXPECT_EQ(run_and_see().thread, body_thread) << "the thread outlives a throwing body";
}

//! A forked child (the parent has a cluster thread, which the child lacks) runs clusters on
//! one of its own instead of waiting forever for the parent's.
TEST(ClusterThreadTest, ForkedChildStartsItsOwn) {
  run_and_see();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::alarm(20);  // a hang ends the child with SIGALRM, which the parent reports
    ClusterOptions options;
    options.world_size = 3;
    Engine engine(options);
    const RunReport report = engine.run([](RankContext&) {});
    ::_exit(report.status == RunStatus::ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child was killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace ranklab::testing
