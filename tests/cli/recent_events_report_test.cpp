// A report's last events read the same whether they come from the ranks' own rings of
// recent events (an untraced run: emulator/detail/recent_events.hpp) or from a trace sink
// that keeps every event (what `ranklab run` uses): the whole report, for every scenario
// of the catalogue (sends, receives from one source and from any, pending ones, collectives,
// barriers, faults) and for a program whose ranks wrap their rings around.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cli/scenarios.hpp"
#include "collectives/cluster.hpp"
#include "traces/sink.hpp"

namespace ranklab::cli {
namespace {

using Program = std::function<void(Communicator&)>;

RunReport run(ClusterOptions options, const Program& program, bool traced) {
  if (traced) options.trace_sink = std::make_shared<MemorySink>();
  Cluster cluster(std::move(options));
  return cluster.run(program);
}

void expect_same_report(const ClusterOptions& options, const Program& program,
                        const std::string& what) {
  const RunReport ring = run(options, program, false);
  const RunReport sink = run(options, program, true);
  EXPECT_EQ(ring.status, sink.status) << what;
  EXPECT_EQ(ring.summary, sink.summary) << what;
  EXPECT_EQ(ring.details, sink.details) << what;
  ASSERT_EQ(ring.analysis.last_events.size(), sink.analysis.last_events.size()) << what;
  for (std::size_t i = 0; i < ring.analysis.last_events.size(); ++i) {
    EXPECT_EQ(ring.analysis.last_events[i].rank, sink.analysis.last_events[i].rank) << what;
    EXPECT_EQ(ring.analysis.last_events[i].events, sink.analysis.last_events[i].events) << what;
  }
}

ClusterOptions scenario_options(const Scenario& s, const std::string& send_mode) {
  ClusterOptions options;
  options.world_size = s.default_world;
  options.send_mode = SendMode::parse(send_mode);
  options.timeout = std::chrono::milliseconds(20'000);
  for (const std::string& fault : s.faults) options.faults.faults.push_back(FaultSpec::parse(fault));
  return options;
}

//! Every scenario, rendezvous and eager: the same report from the rings as from the sink,
//! and the failing ones do report last events.
TEST(RecentEventsReportTest, EveryScenarioReportsTheSameLastEvents) {
  int with_last_events = 0;
  for (const Scenario& s : scenarios()) {
    for (const std::string mode : {"rendezvous", "eager"}) {
      ScenarioOutput output(s.default_world);
      const ScenarioParams params;
      const Program program = [&](Communicator& comm) { s.body(comm, params, output); };
      expect_same_report(scenario_options(s, mode), program, s.name + " (" + mode + ")");
      if (!run(scenario_options(s, mode), program, false).analysis.last_events.empty()) {
        ++with_last_events;
      }
    }
  }
  EXPECT_GE(with_last_events, 20);
}

//! Ranks that post more events than a ring holds (each wraps it around several times), with
//! receives from any source, then deadlock with receives pending: the last events are the
//! last eight, the same from the rings as from the sink.
TEST(RecentEventsReportTest, WrappedRingsReportTheSameLastEvents) {
  ClusterOptions options;
  options.world_size = 4;
  options.timeout = std::chrono::milliseconds(20'000);
  const Program program = [](Communicator& world) {
    std::int64_t v = world.rank();
    std::int64_t in = 0;
    const int next = (world.rank() + 1) % world.size();
    for (int round = 0; round < 7; ++round) {
      Work sent = world.isend(std::span<const std::int64_t>(&v, 1), next, round);
      world.recv(std::span(&in, 1), kAnySource, round);
      sent.wait();
      world.all_reduce(std::span(&v, 1));
      if (round % 2 == 0) world.barrier();  // 25 events: not a whole number of rings
    }
    if (world.rank() != 0) world.recv(std::span(&v, 1), kAnySource, 99);  // nobody sends
  };
  const RunReport report = run(options, program, false);
  ASSERT_EQ(report.status, RunStatus::deadlock);
  ASSERT_FALSE(report.analysis.last_events.empty());
  EXPECT_EQ(report.analysis.last_events.front().events.size(), 8u);
  expect_same_report(options, program, "wrapped rings");
}

}  // namespace
}  // namespace ranklab::cli
