// The schedule log and the preempt policy, which explore uses to replay and shrink
// schedules: a recorded schedule replays exactly as a preempt policy, rank order has no
// deviations, and the policy text parses and prints back.
#include <gtest/gtest.h>

#include <vector>

#include "comm/errors.hpp"
#include "tests/emulator/emulator_test_support.hpp"
#include "tests/support/expect_throw_msg.hpp"

namespace ranklab::testing {
namespace {

// Rank 0 receives one message from every other rank from any source, then all ranks
// all_reduce: the matches, hence the trace, depend on the schedule.
void race(Communicator& world) {
  const int me = world.rank();
  std::int32_t value = me;
  if (me == 0) {
    for (int i = 1; i < world.size(); ++i) world.recv(std::span(&value, 1), kAnySource, 0);
  } else {
    world.send(std::span<const std::int32_t>(&value, 1), 0, 0);
  }
  std::vector<std::int64_t> x = fill<std::int64_t>(me, 3);
  world.all_reduce(std::span(x));
}

struct Recorded {
  Trace trace;
  ScheduleLog log;
};

Recorded record(const std::string& policy, int world) {
  ClusterOptions o;
  o.world_size = world;
  o.policy = SchedulePolicy::parse(policy);
  auto sink = std::make_shared<MemorySink>();
  auto log = std::make_shared<ScheduleLog>();
  o.trace_sink = sink;
  o.schedule_log = log;
  EXPECT_TRUE(run_ok(run_ranks(o, race)));
  return {sink->trace(), *log};
}

SchedulePolicy preempt(const std::vector<Preemption>& list) {
  SchedulePolicy p;
  p.kind = SchedulePolicy::Kind::preempt;
  p.preemptions = list;
  return p;
}

//! A random or PCT run, recorded pick by pick and replayed as a preempt policy listing every
//! pick, gives the same events (Lamport clocks included; the header names the policy); so
//! does the replay of
//! only the picks that were not rank order's choice.
TEST(ScheduleLogTest, RecordedSchedulesReplayExactly) {
  int differing = 0;
  for (const char* policy : {"random:1", "random:2", "random:5", "pct:3:3", "pct:4:2"}) {
    SCOPED_TRACE(policy);
    const Recorded original = record(policy, 6);
    ASSERT_FALSE(original.log.picks.empty());
    std::vector<Preemption> every;
    for (std::size_t i = 0; i < original.log.picks.size(); ++i) {
      every.push_back({i, original.log.picks[i]});
    }
    const Recorded full = record(preempt(every).to_string(), 6);
    EXPECT_EQ(full.trace.ranks, original.trace.ranks);
    EXPECT_EQ(full.log.picks, original.log.picks);
    const Recorded minimal = record(preempt(full.log.deviations).to_string(), 6);
    EXPECT_EQ(minimal.trace.ranks, original.trace.ranks);
    EXPECT_EQ(minimal.log.deviations, full.log.deviations);
    differing += !(original.trace.ranks == record("rank-order", 6).trace.ranks);
  }
  EXPECT_GT(differing, 0) << "some policy must reorder the race, or this test proves nothing";
}

//! Rank order deviates from itself nowhere; its log still has every pick.
TEST(ScheduleLogTest, RankOrderHasNoDeviations) {
  const Recorded r = record("rank-order", 5);
  EXPECT_TRUE(r.log.deviations.empty());
  EXPECT_GE(r.log.picks.size(), 5u);
  EXPECT_EQ(r.log.picks.front(), 0) << "rank order starts with rank 0";
}

//! A preemption naming a rank that is not ready at its step changes nothing.
TEST(ScheduleLogTest, PreemptingAnUnreadyRankIsIgnored) {
  const Recorded plain = record("rank-order", 4);
  const Recorded ignored = record("preempt:0=3000", 4);
  EXPECT_EQ(ignored.trace.ranks, plain.trace.ranks);
  EXPECT_TRUE(ignored.log.deviations.empty());
}

//! The preempt policy's text parses and prints back; steps must increase; a log needs one
//! thread.
TEST(ScheduleLogTest, PolicyTextAndLimits) {
  EXPECT_EQ(SchedulePolicy::parse("preempt:3=1,9=0").to_string(), "preempt:3=1,9=0");
  EXPECT_EQ(SchedulePolicy::parse("preempt:").to_string(), "preempt:");
  EXPECT_THROW_MSG(SchedulePolicy::parse("preempt:3=1,3=0"), UsageError, "steps must increase");
  EXPECT_THROW_MSG(SchedulePolicy::parse("preempt:3"), UsageError, "expected STEP=RANK");
  EXPECT_THROW_MSG(SchedulePolicy::parse("preempt:a=1"), UsageError, "invalid step 'a'");
  ClusterOptions o;
  o.world_size = 4;
  o.threads = 2;
  o.schedule_log = std::make_shared<ScheduleLog>();
  EXPECT_THROW_MSG(Cluster{o}, UsageError, "a schedule log needs one thread, got 2");
}

}  // namespace
}  // namespace ranklab::testing
