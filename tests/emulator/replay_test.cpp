// Replay (emulator/replay.hpp): recorded runs re-issued under every policy, thread count and
// send mode reproduce; deadlocks replay into the same report; a hand-deleted receive
// replays into a deadlock naming the orphaned send; what cannot be replayed says why.
#include "emulator/replay.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "comm/errors.hpp"
#include "tests/support/cluster_params.hpp"
#include "tests/support/expect_throw_msg.hpp"
#include "tests/support/skip_all_reduce.hpp"
#include "traces/jsonl.hpp"
#include "traces/simgrid_ti.hpp"
#include "traces/trace_builder.hpp"
#include "traces/sink.hpp"

namespace ranklab {
namespace {

using testing::ClusterParam;
using testing::contains;

/// Runs `program` on `world` ranks with `policy`, recording the trace; returns the trace
/// and the run's report.
struct Recording {
  Trace trace;
  RunReport report;
};

Recording record(int world, const std::function<void(Communicator&)>& program,
                 const std::string& policy = "rank-order", Algorithm algorithm = Algorithm::direct,
                 SendMode send_mode = {}) {
  ClusterOptions options = ClusterParam{world, policy, 1}.options();
  options.send_mode = send_mode;
  auto sink = std::make_shared<MemorySink>();
  options.trace_sink = sink;
  Recording out;
  out.report = testing::run_ranks(options, program, algorithm);
  out.trace = sink->trace();
  return out;
}

ReplayReport replay(const Trace& trace, const ClusterParam& param, SendMode send_mode = {}) {
  ReplayOptions options;
  options.cluster = param.options();
  options.cluster.send_mode = send_mode;
  return replay_trace(trace, options);
}

::testing::AssertionResult reproduced(const ReplayReport& report) {
  if (report.reproduced() && report.run.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << format_replay(report, "recorded");
}

// A program with every kind of operation: isend/irecv overlap, blocking p2p, a receive
// from any source, every native collective, and a ring all_reduce made of messages.
void every_operation(Communicator& world) {
  const int me = world.rank(), n = world.size();
  std::vector<float> out(16, static_cast<float>(me)), in(16);
  Work sent = world.isend(std::span<const float>(out), (me + 1) % n, 3);
  world.recv(std::span(in), (me + n - 1) % n, 3);
  sent.wait();
  if (me == 0) {
    for (int i = 1; i < n; ++i) world.recv(std::span(in.data(), 1), kAnySource, 9);
  } else {
    world.send(std::span<const float>(out.data(), 1), 0, 9);
  }
  std::vector<double> grad(12, me);
  world.all_reduce(std::span(grad));
  world.all_reduce(std::span(grad), {.algorithm = Algorithm::ring});
  world.broadcast(std::span(grad), {.root = n - 1});
  world.reduce(as_mutable_buffer(std::span(grad)), {.root = n / 2});
  std::vector<double> gathered(12 * static_cast<std::size_t>(n));
  world.all_gather(std::span<const double>(grad), std::span(gathered));
  world.reduce_scatter(std::span<const double>(gathered), std::span(grad));
  world.gather(
      as_buffer(std::span<const double>(grad)),
      me == 0 ? as_mutable_buffer(std::span(gathered)) : MutableBuffer{nullptr, 0, DataType::f64},
      {.root = 0});
  world.scatter(me == 0 ? as_buffer(std::span<const double>(gathered))
                        : ConstBuffer{nullptr, 0, DataType::f64},
                as_mutable_buffer(std::span(grad)), {.root = 0});
  std::vector<double> exchanged(gathered.size());
  world.all_to_all(as_buffer(std::span<const double>(gathered)),
                   as_mutable_buffer(std::span(exchanged)));
  world.barrier();
}

class ReplayParamTest : public ::testing::TestWithParam<ClusterParam> {};

//! A run recorded under rank-order replays, under every policy and thread count, into
//! the same operations and the same send -> receive matches.
TEST_P(ReplayParamTest, RecordedRunReproduces) {
  const Recording rec = record(GetParam().world, every_operation);
  ASSERT_TRUE(testing::run_ok(rec.report));
  const ReplayReport report = replay(rec.trace, GetParam());
  EXPECT_TRUE(reproduced(report));
  std::uint64_t operations = 0;
  for (const auto& events : rec.trace.ranks) operations += events.size();
  EXPECT_EQ(report.replayed_operations, operations);
  EXPECT_EQ(report.reproduced_messages, report.recorded_messages);
  EXPECT_TRUE(report.wait_points);
}

//! The same recording replays under eager sends too (the program needs no buffering).
TEST_P(ReplayParamTest, ReproducesUnderEagerSends) {
  const Recording rec = record(GetParam().world, every_operation);
  EXPECT_TRUE(reproduced(replay(rec.trace, GetParam(), SendMode::parse("eager"))));
  EXPECT_TRUE(reproduced(replay(rec.trace, GetParam(), SendMode::parse("eager<=8"))));
}

INSTANTIATE_TEST_SUITE_P(Worlds, ReplayParamTest,
                         ::testing::ValuesIn(testing::cluster_params({1, 2, 3, 8, 13})),
                         testing::ParamName{});

//! Receives from any source recorded under one policy are forced to their recorded
//! sources: the replay under any other policy matches the recording, not its own race.
TEST(ReplayTest, AnySourceReceivesKeepTheirRecordedSources) {
  const auto wildcard = [](Communicator& world) {
    std::vector<int> value(1, world.rank());
    if (world.rank() == 0) {
      for (int i = 1; i < world.size(); ++i) world.recv(std::span(value), kAnySource, kAnyTag);
    } else {
      world.send(std::span<const int>(value), 0, world.rank());
    }
  };
  for (const char* policy : {"random:3", "pct:5:2"}) {
    const Recording rec = record(6, wildcard, policy);
    for (const ClusterParam& param : testing::cluster_params({6})) {
      EXPECT_TRUE(reproduced(replay(rec.trace, param))) << policy << " -> " << param.name();
    }
  }
}

//! A deadlocked run's trace replays into the same deadlock report, text for text.
TEST(ReplayTest, DeadlockReplaysIntoTheSameReport) {
  const auto send_send = [](Communicator& world) {
    std::vector<int> v(4);
    if (world.rank() < 2) {
      world.send(std::span<const int>(v), 1 - world.rank(), 5);
      world.recv(std::span(v), 1 - world.rank(), 5);
    }
  };
  const auto missing_barrier = [](Communicator& world) {
    if (world.rank() != world.size() - 1) world.barrier();
  };
  const auto blocked_in_recv_with_send_open = [](Communicator& world) {
    std::vector<int> v(2);
    Work sent = world.isend(std::span<const int>(v), (world.rank() + 1) % world.size(), 1);
    world.recv(std::span(v), (world.rank() + 1) % world.size(), 2);  // nobody sends tag 2
    sent.wait();
  };
  // Replay gives the fabric a call site only where it changes (ReplayPlan::new_site): the
  // blocked receive must still be named at its own line, not the barriers' before it.
  const auto site_changes_before_the_wait = [](Communicator& world) {
    std::vector<int> v(1);
    for (int i = 0; i < 3; ++i) world.barrier();
    if (world.rank() == 0) world.recv(std::span(v), 1, 9);  // nobody sends tag 9
  };
  using Program = std::function<void(Communicator&)>;
  for (const Program& program : std::vector<Program>{send_send, missing_barrier,
                                                     blocked_in_recv_with_send_open,
                                                     site_changes_before_the_wait}) {
    const Recording rec = record(3, program);
    ASSERT_EQ(rec.report.status, RunStatus::deadlock);
    const ReplayReport report = replay(rec.trace, ClusterParam{3, "rank-order", 1});
    EXPECT_EQ(report.run.status, RunStatus::deadlock);
    EXPECT_TRUE(report.reproduced()) << format_replay(report, "deadlock");
    EXPECT_EQ(report.run.details, rec.report.details);
    // The report ends with the recorded run's own one-line culprit (a trace made on MPI
    // processes gets the emulator's diagnosis this way).
    ASSERT_NE(rec.report.culprit.kind, CulpritKind::none);
    EXPECT_TRUE(contains(format_replay(report, "deadlock"),
                         fmt::format("culprit ({}): {}\n", culprit_kind_name(rec.report.culprit),
                                     rec.report.culprit.text)))
        << format_replay(report, "deadlock");
    EXPECT_EQ(replay_exit_code(report), 3);
    for (const ClusterParam& param : testing::cluster_params({3})) {
      const ReplayReport other = replay(rec.trace, param);
      EXPECT_EQ(other.run.status, RunStatus::deadlock) << param.name();
      EXPECT_TRUE(other.reproduced()) << param.name() << format_replay(other, "deadlock");
    }
  }
}

//! Issue 28 §1's classic bug, recorded, written as JSONL and read back: every rank's pending
//! call is in the trace, so the replay judges the mismatch on all four (none "not called
//! yet") and blames rank 0, the odd one, under every policy and thread count, word for word
//! as the recorded run did.
TEST(ReplayTest, MismatchReplaysIntoTheSameVerdictUnderEveryPolicy) {
  const Recording rec = record(4, testing::skip_all_reduce, "random:2");
  ASSERT_EQ(rec.report.status, RunStatus::mismatch) << rec.report.details;
  ASSERT_EQ(rec.report.culprit.ranks, std::vector<int>{0}) << rec.report.details;
  std::stringstream jsonl;
  write_trace(jsonl, rec.trace);
  const Trace trace = read_trace(jsonl, "skip.jsonl");
  for (const std::string policy : {"rank-order", "random:1", "random:2", "random:3", "pct:11:3",
                                   "preempt:1=3,2=2"}) {
    for (const int threads : {1, 2}) {
      const ClusterParam param{4, policy, threads};
      const ReplayReport report = replay(trace, param);
      EXPECT_EQ(report.run.status, RunStatus::mismatch) << param.name();
      EXPECT_TRUE(report.reproduced()) << param.name() << format_replay(report, "mismatch");
      EXPECT_EQ(report.run.culprit.ranks, std::vector<int>{0}) << param.name();
      EXPECT_EQ(report.run.details, rec.report.details) << param.name();
      EXPECT_TRUE(contains(report.run.details, "\nrank 0 is the odd one: 1 rank vs 3"));
      EXPECT_EQ(report.run.details.find("never called"), std::string::npos) << param.name();
    }
  }
}

//! One receive deleted by hand: the replay deadlocks, and the report names the send that
//! nobody receives any more, and where the replay parted from the recording.
TEST(ReplayTest, DeletedReceiveNamesTheOrphanedSend) {
  const auto ring = [](Communicator& world) {
    std::vector<float> v(8);
    const int me = world.rank(), n = world.size();
    for (int step = 0; step < 2; ++step) {
      Work sent = world.isend(std::span<const float>(v), (me + 1) % n, 7);
      world.recv(std::span(v), (me + n - 1) % n, 7);
      sent.wait();
    }
  };
  Recording rec = record(4, ring);
  ASSERT_TRUE(testing::run_ok(rec.report));
  auto& rank1 = rec.trace.ranks[1];
  const auto last_recv = std::find_if(rank1.rbegin(), rank1.rend(),
                                      [](const TraceEvent& e) { return e.op == OpKind::recv; });
  ASSERT_NE(last_recv, rank1.rend());
  const MessageId orphan = last_recv->msg;
  rank1.erase(std::next(last_recv).base());

  const ReplayReport report = replay(rec.trace, ClusterParam{4, "rank-order", 1});
  EXPECT_EQ(report.run.status, RunStatus::deadlock);
  EXPECT_FALSE(report.reproduced());
  EXPECT_TRUE(contains(
      report.run.details,
      fmt::format("rank 0: send to rank 1 tag 7 in world (8 x f32), op #{}", orphan.sender_seq)));
  EXPECT_TRUE(contains(report.run.details, "rank 1 finished (returned) while rank 0 waits"));
  ASSERT_FALSE(report.divergences.empty());
  EXPECT_EQ(report.divergences.front().rank, 0);
  EXPECT_EQ(report.divergences.front().rank_seq, orphan.sender_seq);
}

//! A receive whose handle was dropped (pending, cancelled) and a buffered send never waited
//! for replay as recorded: replay drops them too instead of blocking on them.
TEST(ReplayTest, DroppedOperationsAreDroppedAgain) {
  const auto program = [](Communicator& world) {
    std::vector<int> v(2);
    if (world.rank() == 0) {
      { Work never = world.irecv(std::span(v), 1, 99); }  // cancelled: nobody sends tag 99
      world.send(std::span<const int>(v), 1, 1);
      Work unwaited = world.isend(std::span<const int>(v), 1, 2);  // buffered, received later
    } else {
      world.recv(std::span(v), 0, 1);
      world.recv(std::span(v), 0, 2);
    }
  };
  const Recording rec =
      record(2, program, "rank-order", Algorithm::direct, SendMode::parse("eager"));
  ASSERT_TRUE(testing::run_ok(rec.report));
  ASSERT_EQ(rec.trace.ranks[0][0].status, OpStatus::pending);
  for (const ClusterParam& param : testing::cluster_params({2})) {
    EXPECT_TRUE(reproduced(replay(rec.trace, param, SendMode::parse("eager")))) << param.name();
  }
}

//! Receives from any source are recorded as such (format 1.3 `any_source`). Replay pins
//! each to the sender it matched, under every policy; with free_any_source the schedule
//! chooses again, and some policy makes another match: a divergence in peer and msg. The
//! fabric's non-overtaking order holds, so the run itself always completes.
TEST(ReplayTest, FreeAnySourceLetsTheScheduleChooseTheSender) {
  const Recording rec = record(4, [](Communicator& world) {
    std::int32_t v = world.rank();
    if (world.rank() == 0) {
      for (int i = 1; i < 4; ++i) world.recv(std::span(&v, 1), kAnySource, 0);
    } else {
      world.send(std::span<const std::int32_t>(&v, 1), 0, 0);
    }
  });
  ASSERT_TRUE(testing::run_ok(rec.report));
  for (const TraceEvent& e : rec.trace.ranks[0]) EXPECT_TRUE(e.any_source);
  EXPECT_FALSE(rec.trace.ranks[1][0].any_source);
  bool diverged = false;
  for (int seed = 1; seed <= 20; ++seed) {
    const ClusterParam param{4, "random:" + std::to_string(seed), 1};
    EXPECT_TRUE(reproduced(replay(rec.trace, param))) << "pinned, seed " << seed;
    ReplayOptions options;
    options.cluster = param.options();
    options.free_any_source = true;
    const ReplayReport free = replay_trace(rec.trace, options);
    EXPECT_TRUE(testing::run_ok(free.run));
    if (free.reproduced()) continue;
    diverged = true;
    ASSERT_FALSE(free.divergences.empty());
    EXPECT_EQ(free.divergences.front().rank, 0);
    EXPECT_NE(std::find(free.divergences.front().fields.begin(),
                        free.divergences.front().fields.end(), "peer"),
              free.divergences.front().fields.end());
  }
  EXPECT_TRUE(diverged) << "no schedule of 20 matched another sender";
}

//! Gaps in rank_seq (allowed by the format) survive: the replayed operations keep their
//! recorded numbers, so message ids still match.
TEST(ReplayTest, RecordedNumbersAreKept) {
  Recording rec = record(2, [](Communicator& world) {
    std::vector<int> v(1);
    world.barrier();
    if (world.rank() == 0) world.send(std::span<const int>(v), 1, 0);
    if (world.rank() == 1) world.recv(std::span(v), 0, 0);
  });
  for (auto& events : rec.trace.ranks) {
    for (auto& e : events) e.rank_seq += 10;
  }
  for (auto& events : rec.trace.ranks) {
    for (auto& e : events) {
      if (e.msg.valid()) e.msg.sender_seq += 10;
    }
  }
  EXPECT_TRUE(reproduced(replay(rec.trace, ClusterParam{2, "random:1", 2})));
}

//! A trace whose recorded hashes disagree for one message is not reproduced, and says which.
TEST(ReplayTest, DisagreeingRecordedHashesAreReported) {
  Recording rec = record(2, [](Communicator& world) {
    std::vector<int> v(3, 1);
    if (world.rank() == 0) world.send(std::span<const int>(v), 1, 0);
    if (world.rank() == 1) world.recv(std::span(v), 0, 0);
  });
  rec.trace.ranks[1][0].hash ^= 1;
  const ReplayReport report = replay(rec.trace, ClusterParam{2, "rank-order", 1});
  EXPECT_EQ(report.hashes_checked, 1u);
  EXPECT_EQ(report.hash_mismatches, 1u);
  EXPECT_FALSE(report.reproduced());
  EXPECT_TRUE(contains(report.first_hash_mismatch, "rank 1 op #0"));
  EXPECT_EQ(replay_exit_code(report), kExitNotReproduced);
}

//! A format 1.0 trace has no wait points: every operation is waited for before the next.
//! Blocking programs still reproduce; the report says what was assumed.
TEST(ReplayTest, VersionOneZeroMeansBlockingCalls) {
  Recording rec = record(4, [](Communicator& world) {
    std::vector<int> v(1);
    world.all_reduce(std::span(v));
    if (world.rank() % 2 == 0) world.send(std::span<const int>(v), world.rank() + 1, 0);
    if (world.rank() % 2 == 1) world.recv(std::span(v), world.rank() - 1, 0);
  });
  rec.trace.header.version = "1.0";
  const ReplayReport report = replay(rec.trace, ClusterParam{4, "random:2", 1});
  EXPECT_TRUE(reproduced(report));
  EXPECT_FALSE(report.wait_points);
  EXPECT_TRUE(contains(format_replay(report, "t"), "no wait points (format 1.0)"));
}

//! SMPI's recordings (traces/examples/ti) replay on the fabric, reproduced, under every
//! policy and thread count.
TEST(ReplayTest, SimgridRecordingsReproduce) {
  const auto ti = std::filesystem::path(RANKLAB_SOURCE_DIR) / "traces" / "examples" / "ti";
  for (const char* name : {"ring8", "mix4"}) {
    const Trace trace = read_simgrid_ti(ti / name);
    for (const ClusterParam& param : testing::cluster_params({trace.header.world_size})) {
      EXPECT_TRUE(reproduced(replay(trace, param))) << name << " " << param.name();
    }
  }
}

//! What cannot be replayed fails before the run, naming the operation.
TEST(ReplayTest, UnreplayableTracesSayWhy) {
  Recording rec = record(2, [](Communicator& world) {
    std::vector<int> v(1);
    if (world.rank() == 0) world.send(std::span<const int>(v), 1, 0);
    if (world.rank() == 1) world.recv(std::span(v), 0, 0);
  });
  Trace huge = rec.trace;
  huge.ranks[0][0].count = std::uint64_t{1} << 40;
  huge.ranks[0][0].bytes = huge.ranks[0][0].count * 4;
  EXPECT_THROW_MSG(replay(huge, ClusterParam{2}), TraceError,
                   "rank 0 op #0 (send): cannot replay: its buffers exceed");
  Trace negative = rec.trace;
  negative.ranks[0][0].tag = -3;
  EXPECT_THROW_MSG(replay(negative, ClusterParam{2}), TraceError, "tag must be >= 0");
}

/// A 1.1 trace of `world` ranks as text: the header, then `events(rank)` for each rank.
std::string trace_text(int world, const std::function<std::string(int)>& events) {
  std::string ranks;
  for (int r = 0; r < world; ++r) ranks += fmt::format("{}{}", r ? "," : "", r);
  std::string text = fmt::format(
      R"({{"format":"ranklab-trace","version":"1.1","world_size":{},"groups":[{{"name":"world",)"
      R"("ranks":[{}]}}],"config":{{}}}})",
      world, ranks);
  for (int r = 0; r < world; ++r) text += "\n" + events(r);
  return text + "\n";
}

Trace read_text(const std::string& text) {
  std::istringstream in(text);
  return read_trace(in, "t.jsonl");
}

/// One all_gather of `count` bytes on every rank.
std::string all_gathers(int world, std::uint64_t count) {
  return trace_text(world, [count](int r) {
    return fmt::format(
        R"({{"rank":{},"rank_seq":0,"op":"all_gather","group":"world","dtype":"u8","count":{},)"
        R"("bytes":{},"coll_seq":0,"lamport":1}})",
        r, count, count);
  });
}

//! A refusal of a trace the reader accepted names FILE:LINE as well as the rank and op #
//! (issue 16): a count of 2^48, a negative tag.
TEST(ReplayTest, RefusalsNameTheFileAndLine) {
  const auto send = [](std::uint64_t count, int tag) {
    return [count, tag](int r) {
      if (r == 1) {
        return std::string(R"({"rank":1,"rank_seq":0,"op":"recv","group":"world",)") +
               fmt::format(R"("peer":0,"tag":{},"dtype":"u8","count":{},"bytes":{},)", tag, count,
                           count) +
               R"("msg":"0:0","lamport":2})";
      }
      return fmt::format(R"({{"rank":0,"rank_seq":0,"op":"send","group":"world","peer":1,)"
                         R"("tag":{},"dtype":"u8","count":{},"bytes":{},"msg":"0:0","lamport":1}})",
                         tag, count, count);
    };
  };
  EXPECT_THROW_MSG(
      replay(read_text(trace_text(2, send(std::uint64_t{1} << 48, 0))), ClusterParam{2}),
      TraceError,
      "t.jsonl:2: rank 0 op #0 (send): cannot replay: its buffers exceed the replay "
      "limit of 1073741824 bytes");
  EXPECT_THROW_MSG(replay(read_text(trace_text(2, send(4, -5))), ClusterParam{2}), TraceError,
                   "t.jsonl:2: rank 0 op #0 (send): cannot replay: a send's tag must be >= 0");
}

//! 16 all_gathers of 1 GiB each would take 16 GiB: refused before anything is allocated,
//! naming the total, the limit and the largest buffer.
TEST(ReplayTest, BuffersOverTheMemoryLimitAreRefused) {
  const Trace trace = read_text(all_gathers(16, std::uint64_t{64} << 20));
  ReplayOptions options;
  options.cluster = ClusterParam{16}.options();
  options.max_memory_bytes = std::uint64_t{8} << 30;
  options.memory_limit_hint = " (--hint)";
  EXPECT_THROW_MSG(replay_trace(trace, options), TraceError,
                   "t.jsonl:2: rank 0 op #0 (all_gather): cannot replay: the replay's buffers "
                   "would take 17246978048 bytes (16.1 GiB) in all, over its memory limit of "
                   "8589934592 bytes (8.0 GiB) (--hint); the largest is this operation's, "
                   "1073741824 bytes (1.0 GiB)");
  // Under the limit, the same sizes are accepted: the limit is on the sum.
  const Trace small = read_text(all_gathers(4, 1024));
  options.cluster = ClusterParam{4}.options();
  options.max_memory_bytes = 4 * 4096 + 1024;
  EXPECT_TRUE(replay_trace(small, options).run.ok());
  options.max_memory_bytes -= 1;
  EXPECT_THROW_MSG(replay_trace(small, options), TraceError,
                   "over its memory limit of 17407 bytes (17.0 KiB) (--hint);");
}

//! By default a replay may take half of this machine's memory: 4 TiB of buffers (4096 ranks
//! each gathering 1 GiB) are refused, and the message says where the limit comes from.
TEST(ReplayTest, DefaultMemoryLimitIsHalfTheMachine) {
  EXPECT_GT(default_replay_memory_limit(), std::uint64_t{1} << 20);
  const Trace trace = read_text(all_gathers(4096, std::uint64_t{256} << 10));
  ReplayOptions options;
  options.cluster = ClusterParam{4096}.options();
  EXPECT_THROW_MSG(replay_trace(trace, options), TraceError,
                   "would take 4398046773248 bytes (4096.0 GiB) in all, over its memory limit of " +
                       fmt::format("{} bytes", default_replay_memory_limit()));
  EXPECT_THROW_MSG(replay_trace(trace, options), TraceError, ", half of this machine's memory;");
}

}  // namespace
}  // namespace ranklab

namespace ranklab {
namespace {

//! Replay carries compute through: compute events (labelled, with layer and micro-batch)
//! and unlabelled amounts go on the same operations of the replayed trace, compute_after
//! too; the virtual times of a timed recording are left out (the replay's timing writes
//! them again).
TEST(ReplayTest, ComputeIsCarriedThrough) {
  TraceBuilder b(2);
  b.compute_event(0, {.label = "forward", .layer = 0, .microbatch = 1, .flops = 4096,
                      .vt_start_ns = 0, .vt_end_ns = 5});
  b.send(0, 1, DataType::f32, 4, 0);
  b.compute(1, {.flops = 2e9});
  b.recv(1, 0, DataType::f32, 4, 0);
  b.compute_event(1, {.label = "backward", .layer = 0, .microbatch = 1, .seconds = 0.5});
  const Trace trace = b.build().trace;
  ReplayOptions options;
  options.cluster = ClusterParam{2, "rank-order", 1}.options();
  auto sink = std::make_shared<MemorySink>();
  options.cluster.trace_sink = sink;
  ASSERT_TRUE(reproduced(replay_trace(trace, options)));
  const Trace& replayed = sink->trace();
  ASSERT_EQ(replayed.ranks[0].size(), 1u);
  ComputeWork expected;
  expected.add(ComputeItem{.label = "forward", .layer = 0, .microbatch = 1, .flops = 4096});
  EXPECT_EQ(replayed.ranks[0][0].compute, expected);
  EXPECT_EQ(replayed.ranks[1][0].compute, trace.ranks[1][0].compute);
  EXPECT_TRUE(replayed.ranks[1][0].compute.items.empty());  // still an unlabelled amount
  EXPECT_EQ(replayed.ranks[1][0].compute_after, trace.ranks[1][0].compute_after);
}

}  // namespace
}  // namespace ranklab
