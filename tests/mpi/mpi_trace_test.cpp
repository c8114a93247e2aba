// The MPI backend's trace against the emulator's: for a deterministic program, every rank's
// event stream is the same (`ranklab diff` says identical), wait points and message ids
// included.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "collectives/cluster.hpp"
#include "collectives/mpi/mpi_run.hpp"
#include "tests/mpi/collective_cases.hpp"
#include "tests/mpi/mpi_test_support.hpp"
#include "traces/diff.hpp"
#include "traces/sink.hpp"
#include "tests/support/cluster_fixture.hpp"

namespace ranklab::testing {
namespace {

// Point-to-point in a ring, blocking and not (with overlap), then collectives of every kind
// of path: direct, point-to-point algorithms (tagged messages), groups, non-blocking.
void traced_program(Communicator& comm) {
  const int me = comm.rank();
  const int p = comm.size();
  std::vector<float> out(6, static_cast<float>(me) + 0.5f);
  std::vector<float> in(8, -1.0f);
  Work recv = comm.irecv(std::span(in), (me + p - 1) % p, 3);
  Work send = comm.isend(std::span<const float>(out), (me + 1) % p, 3);
  std::vector<double> data(17, 1.0 / (me + 3));
  comm.all_reduce(std::span(data), {ReduceOp::sum, Algorithm::ring});
  send.wait();
  recv.wait();
  comm.broadcast(std::span(in), {.root = p - 1, .algorithm = Algorithm::tree});
  Work pending = comm.iall_reduce(as_mutable_buffer(std::span(data)), {ReduceOp::max});
  comm.barrier({Algorithm::dissemination});
  pending.wait();
  Communicator half = comm.split(me % 2, me);
  half.all_reduce(std::span(data), {ReduceOp::avg, Algorithm::recursive_doubling});
  std::vector<std::int32_t> gathered(static_cast<std::size_t>(p) * 3);
  const std::vector<std::int32_t> mine(3, me);
  comm.all_gather(std::span<const std::int32_t>(mine), std::span(gathered));
  run_overlapping(comm);
}

//! Every rank's events on MPI equal the emulator's: diff says identical.
TEST(MpiTrace, SameEventsAsTheEmulator) {
  auto sink = std::make_shared<MemorySink>();
  ClusterOptions options;
  options.world_size = session().size();
  options.trace_sink = sink;
  expect_run_ok(options, traced_program);
  const Trace& emulated = sink->trace();

  session().record_trace();
  Communicator world = session().world();
  traced_program(world);
  const Trace recorded = session().trace_of_job({{"backend", "mpi"}});
  if (session().rank() != 0) return;
  const TraceDiff diff = diff_traces(emulated, recorded);
  EXPECT_TRUE(diff.identical()) << format_diff(diff, "emulator", "mpi");
  ASSERT_EQ(recorded.ranks.size(), emulated.ranks.size());
  EXPECT_GT(recorded.ranks[0].size(), 10u);
  // Wait points are compared too (diff leaves them out).
  for (std::size_t r = 0; r < recorded.ranks.size(); ++r) {
    ASSERT_EQ(recorded.ranks[r].size(), emulated.ranks[r].size()) << "rank " << r;
    for (std::size_t i = 0; i < recorded.ranks[r].size(); ++i) {
      EXPECT_EQ(recorded.ranks[r][i].in_flight, emulated.ranks[r][i].in_flight)
          << "rank " << r << " event " << i;
    }
  }
}

// A ring exchange and an all_reduce, then the rank's bytes: what it received and reduced.
std::string gathering_program(Communicator& comm) {
  const int me = comm.rank();
  const int p = comm.size();
  const std::int32_t out = 10 * me;
  std::int32_t in = -1;
  Work received = comm.irecv(std::span(&in, 1), (me + p - 1) % p, 4);
  comm.send(std::span<const std::int32_t>(&out, 1), (me + 1) % p, 4);
  received.wait();
  std::vector<std::int64_t> sum(3, me + 1);
  comm.all_reduce(std::span(sum), {ReduceOp::sum});
  return fmt::format("{}:{}:{}", me, in, sum[0]);
}

//! The same program through the Launcher interface on both backends: rank 0 of the MPI job
//! gets every rank's bytes and a trace equal to the emulator's, whose header holds the
//! config given plus the backend and the hosts; the other processes get no results.
TEST(MpiTrace, LaunchersRunTheSameProgramAlike) {
  const int n = session().size();
  ClusterOptions options;
  options.world_size = n;
  EmulatorLauncher emulator(options);
  MpiLauncher mpi(session());
  EXPECT_EQ(mpi.world_size(), n);
  EXPECT_EQ(mpi.device(), DeviceKind::cpu);
  EXPECT_EQ(mpi.local_ranks(), 1);
  const LaunchOptions launch{.algorithm = Algorithm::direct,
                             .record = true,
                             .trace_config = {{"program", "launcher-test"}}};
  const Launched emulated = emulator.run_gathering(launch, gathering_program);
  ASSERT_TRUE(emulated.report.ok()) << emulated.report.summary;
  const Launched run = mpi.run_gathering(launch, gathering_program);
  EXPECT_TRUE(run.report.ok()) << run.report.summary;
  EXPECT_EQ(run.has_results, session().rank() == 0);
  if (!run.has_results) {
    EXPECT_TRUE(run.results.empty());
    return;
  }
  EXPECT_EQ(run.results, emulated.results);
  const TraceDiff diff = diff_traces(emulated.trace, run.trace);
  EXPECT_TRUE(diff.identical()) << format_diff(diff, "emulator", "mpi");
  const nlohmann::json& config = run.trace.header.config;
  EXPECT_EQ(config.value("program", ""), "launcher-test");
  EXPECT_EQ(config.value("backend", ""), "mpi");
  ASSERT_TRUE(config.contains("hosts"));
  EXPECT_EQ(config["hosts"].size(), static_cast<std::size_t>(n));
}

}  // namespace
}  // namespace ranklab::testing
