// The cost model (traces/cost_model.hpp) and virtual time (traces/virtual_time.hpp) on
// traces made with TraceBuilder: the formulas, the rules of the simulation, the GPipe
// bubble's closed form, topology files and their errors, and exports on the virtual axis.
#include "traces/cost_model.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>

#include "tests/support/expect_throw_msg.hpp"
#include "traces/error.hpp"
#include "traces/export_perfetto.hpp"
#include "traces/jsonl.hpp"
#include "traces/timeline.hpp"
#include "traces/trace_builder.hpp"
#include "traces/virtual_time.hpp"

namespace ranklab {
namespace {

constexpr double kAlpha = 1e-6;
constexpr double kBeta = 1e9;
const CostModel kModel = CostModel::alpha_beta(kAlpha, kBeta);

Trace built(TraceBuilder& builder) {
  BuiltTrace b = builder.build();
  EXPECT_TRUE(b.unmatched.empty());
  return std::move(b.trace);
}

//! Each collective's formula, at 8 ranks and for a single rank (free).
TEST(CostModelTest, CollectiveFormulas) {
  const std::vector<int> eight = {0, 1, 2, 3, 4, 5, 6, 7};
  const double n = 8000, a = kAlpha, b = kBeta;
  const auto cost = [&](OpKind op) { return kModel.collective_seconds(op, eight, 8000); };
  EXPECT_DOUBLE_EQ(cost(OpKind::barrier), 3 * a);
  EXPECT_DOUBLE_EQ(cost(OpKind::broadcast), 3 * (a + n / b));
  EXPECT_DOUBLE_EQ(cost(OpKind::reduce), 3 * (a + n / b));
  EXPECT_DOUBLE_EQ(cost(OpKind::all_reduce), 14 * (a + n / (8 * b)));
  EXPECT_DOUBLE_EQ(cost(OpKind::all_gather), 7 * (a + n / b));
  EXPECT_DOUBLE_EQ(cost(OpKind::reduce_scatter), 7 * (a + n / b));
  EXPECT_DOUBLE_EQ(cost(OpKind::all_to_all), 7 * (a + n / b));
  EXPECT_DOUBLE_EQ(cost(OpKind::gather), 3 * a + 7 * n / b);
  EXPECT_DOUBLE_EQ(cost(OpKind::scatter), 3 * a + 7 * n / b);
  const std::vector<int> one = {3};
  EXPECT_EQ(kModel.collective_seconds(OpKind::all_reduce, one, 8000), 0.0);
  EXPECT_DOUBLE_EQ(kModel.p2p_seconds(0, 1, 1000), a + 1000 / b);
}

//! A topology puts ranks on nodes: links inside a node and between nodes differ, and a
//! collective spanning nodes pays the slower link.
TEST(CostModelTest, TopologyNodesAndLinks) {
  const CostModel model = CostModel::parse_topology(
      "# two nodes of four\n"
      "ranks_per_node = 4\n"
      "intra.latency = 1e-6   # NVLink-ish\n"
      "intra.bandwidth = 100e9\n"
      "inter.latency = 5e-6\n"
      "inter.bandwidth = 10e9\n"
      "compute.flops_per_second = 1e12\n"
      "compute.layer_seconds = 0.002\n",
      "topo.txt");
  EXPECT_TRUE(model.same_node(0, 3));
  EXPECT_FALSE(model.same_node(3, 4));
  EXPECT_DOUBLE_EQ(model.p2p_seconds(1, 2, 1000), 1e-6 + 1000 / 100e9);
  EXPECT_DOUBLE_EQ(model.p2p_seconds(1, 5, 1000), 5e-6 + 1000 / 10e9);
  const std::vector<int> in_node = {0, 1, 2, 3}, across = {2, 3, 4, 5};
  EXPECT_DOUBLE_EQ(model.collective_seconds(OpKind::barrier, in_node, 0), 2e-6);
  EXPECT_DOUBLE_EQ(model.collective_seconds(OpKind::barrier, across, 0), 10e-6);
  EXPECT_DOUBLE_EQ(model.compute_seconds({.flops = 3e12, .seconds = 0.5}), 3.5);
  EXPECT_DOUBLE_EQ(model.layer_seconds(3), 0.006);
  EXPECT_NE(model.describe().find("4 ranks/node"), std::string::npos) << model.describe();
}

//! The PCIe link (pcie.latency, pcie.bandwidth) prices staging copies, and only them:
//! free without it, α + bytes/β with it, whatever FLOP rate or layer time the model has.
TEST(CostModelTest, PcieTimesStagingCopies) {
  const ComputeItem copy{.label = "staging", .copy = StagingCopy::to_host, .bytes = 4000};
  const ComputeItem layer{.label = "forward", .layer = 0, .flops = 2e9};
  const CostModel free_pcie = CostModel::parse_topology(
      "intra.latency = 1e-6\nintra.bandwidth = 1e10\ncompute.flops_per_second = 1e12\n", "t.txt");
  EXPECT_DOUBLE_EQ(free_pcie.event_seconds(copy), 0.0);
  const CostModel model = CostModel::parse_topology(
      "intra.latency = 1e-6\nintra.bandwidth = 1e10\ncompute.flops_per_second = 1e12\n"
      "compute.layer_seconds = 0.5\npcie.latency = 1e-5\npcie.bandwidth = 2e9\n",
      "t.txt");
  EXPECT_DOUBLE_EQ(model.event_seconds(copy), 1e-5 + 4000 / 2e9);
  EXPECT_DOUBLE_EQ(model.event_seconds(layer), 0.5);
  ComputeWork work;
  work.add(layer);
  work.add(copy);
  EXPECT_DOUBLE_EQ(model.compute_seconds(work), 0.5 + 1e-5 + 4000 / 2e9);
  EXPECT_NE(model.describe().find("pcie alpha=1e-05 s beta=2e+09 B/s"), std::string::npos)
      << model.describe();
  EXPECT_THROW(CostModel::parse_topology("intra.latency = 1\nintra.bandwidth = 1\n"
                                         "pcie.bandwidth = 0\n",
                                         "t.txt"),
               TraceError);
}

//! Bad topology files and --cost values say what and where.
TEST(CostModelTest, BadInputSaysWhatAndWhere) {
  const auto topology_error = [](const std::string& text) {
    try {
      CostModel::parse_topology(text, "t.txt");
    } catch (const TraceError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string ok = "intra.latency = 1e-6\nintra.bandwidth = 1e9\n";
  EXPECT_EQ(topology_error(ok), "");
  EXPECT_EQ(topology_error(ok + "bogus = 3\n").substr(0, 34), "t.txt:3: unknown key 'bogus' (know");
  EXPECT_EQ(topology_error("intra.latency = fast\n"),
            "t.txt:1: 'intra.latency' must be a number >= 0, got 'fast'");
  EXPECT_EQ(topology_error("intra.bandwidth = 0\nintra.latency = 0\n"),
            "t.txt:1: 'intra.bandwidth' must be a number > 0, got '0'");
  EXPECT_EQ(topology_error(ok + "intra.latency = 2\n"), "t.txt:3: 'intra.latency' repeats line 1");
  EXPECT_EQ(topology_error("intra.latency = 1\n"), "t.txt:2: missing 'intra.bandwidth'");
  EXPECT_EQ(topology_error(ok + "ranks_per_node = 4\n"),
            "t.txt:4: missing 'inter.latency' (ranks_per_node is set)");
  EXPECT_EQ(topology_error(ok + "inter.latency = 1\n"),
            "t.txt:3: inter.* needs ranks_per_node (otherwise every rank shares one node)");
  EXPECT_EQ(topology_error(ok + "ranks_per_node = 2.5\n"),
            "t.txt:3: 'ranks_per_node' must be a whole number of ranks, got '2.5'");
  EXPECT_EQ(topology_error("no equals sign\n"),
            "t.txt:1: expected KEY = VALUE, got 'no equals sign'");
  EXPECT_THROW_MSG(CostModel::load("/nonexistent/topo.txt"), TraceError,
                   "/nonexistent/topo.txt: cannot open topology file");

  EXPECT_DOUBLE_EQ(CostModel::parse("alpha=1e-6,beta=2e9,flops=1e12").topology().inter.bandwidth,
                   2e9);
  EXPECT_THROW_MSG(CostModel::parse("alpha=1e-6"), UsageError, "--cost: missing beta");
  EXPECT_THROW_MSG(CostModel::parse("alpha=1e-6,beta=0"), UsageError,
                   "--cost: beta must be a number > 0, got '0'");
  EXPECT_THROW_MSG(CostModel::parse("alpha=-1,beta=1"), UsageError,
                   "--cost: alpha must be a number >= 0, got '-1'");
  EXPECT_THROW_MSG(CostModel::parse("gamma=1"), UsageError, "--cost: 'gamma=1' is not KEY=VALUE");
  EXPECT_THROW_MSG(CostModel::parse("alpha=1,alpha=2,beta=1"), UsageError, "alpha given twice");
}

//! A rendezvous message starts when the later side posts; an eager send completes when
//! posted and lets its rank go on.
TEST(VirtualTimeTest, RendezvousAndEagerSends) {
  TraceBuilder b(2);
  b.send(0, 1, DataType::u8, 1000, 0);
  b.compute(0, {.seconds = 0.5});
  b.icollective(0, OpKind::barrier, DataType::u8, 0);  // open at the end: waited for
  b.compute(1, {.seconds = 1.0});
  b.recv(1, 0, DataType::u8, 1000, 0);
  b.collective(1, OpKind::barrier, DataType::u8, 0);
  const Trace trace = built(b);
  const double transfer = kAlpha + 1000 / kBeta;
  const VirtualTimes rv = simulate(trace, kModel);
  EXPECT_DOUBLE_EQ(rv.operations[0][0].start, 1.0);
  EXPECT_DOUBLE_EQ(rv.operations[0][0].end, 1.0 + transfer);
  EXPECT_DOUBLE_EQ(rv.operations[0][1].post, 1.5 + transfer);  // the barrier, after compute
  EXPECT_DOUBLE_EQ(rv.step_seconds, 1.5 + transfer + kAlpha);  // barrier of 2: one round
  EXPECT_DOUBLE_EQ(rv.ranks[1].compute, 1.0);
  const VirtualTimes eager = simulate(trace, kModel, {.eager_limit = 1000});
  EXPECT_DOUBLE_EQ(eager.operations[0][0].end, 0.0);
  EXPECT_DOUBLE_EQ(eager.operations[1][0].end, 1.0);  // arrived long before it was asked for
  EXPECT_DOUBLE_EQ(eager.operations[0][1].post, 0.5);
  EXPECT_DOUBLE_EQ(simulate(trace, kModel, {.eager_limit = 999}).operations[0][0].end,
                   1.0 + transfer);  // eager<=999: this message is a rendezvous
}

//! GPipe with free communication: a stage is idle (p-1)/(m+p-1) of the step, the pipeline
//! bubble's closed form, and the step is (m+p-1)(tf+tb).
TEST(VirtualTimeTest, GPipeBubbleClosedForm) {
  const CostModel free = CostModel::alpha_beta(0, std::numeric_limits<double>::infinity());
  for (const auto& [p, m] : {std::pair{2, 1}, {4, 8}, {3, 5}, {8, 4}}) {
    const double tf = 1.0, tb = 2.0;
    TraceBuilder b(p);
    for (int s = 0; s < p; ++s) {
      for (int j = 0; j < m; ++j) {  // forwards
        if (s > 0) b.recv(s, s - 1, DataType::f32, 64, 0);
        b.compute(s, {.seconds = tf});
        if (s < p - 1) b.send(s, s + 1, DataType::f32, 64, 0);
      }
      for (int j = 0; j < m; ++j) {  // backwards
        if (s < p - 1) b.recv(s, s + 1, DataType::f32, 64, 1);
        b.compute(s, {.seconds = tb});
        if (s > 0) b.send(s, s - 1, DataType::f32, 64, 1);
      }
    }
    const VirtualTimes t = simulate(built(b), free);
    EXPECT_TRUE(t.complete);
    EXPECT_DOUBLE_EQ(t.step_seconds, (m + p - 1) * (tf + tb)) << p << " " << m;
    EXPECT_NEAR(t.bubble, static_cast<double>(p - 1) / (m + p - 1), 1e-12) << p << " " << m;
    for (const RankTime& rank : t.ranks) EXPECT_DOUBLE_EQ(rank.busy, m * (tf + tb));
  }
}

//! Two ranks that both receive first never finish in virtual time either.
TEST(VirtualTimeTest, DeadlockStalls) {
  TraceBuilder b(2);
  b.recv(0, 1, DataType::i32, 1, 0);
  b.send(0, 1, DataType::i32, 1, 0);
  b.recv(1, 0, DataType::i32, 1, 0);
  b.send(1, 0, DataType::i32, 1, 0);
  const VirtualTimes t = simulate(built(b), kModel);
  EXPECT_FALSE(t.complete);
  EXPECT_FALSE(t.ranks[0].finished);
  EXPECT_LT(t.operations[0][0].end, 0);
  EXPECT_NE(format_virtual_times(t, kModel).find("stalled"), std::string::npos);
}

//! Overlapped isend/irecv pairs (a ring step) take one transfer, not two; FLOPs cost time
//! at the model's rate only.
TEST(VirtualTimeTest, OverlapAndFlops) {
  TraceBuilder b(3);
  for (int r = 0; r < 3; ++r) {
    b.compute(r, {.flops = 2e9});
    const auto recv = b.irecv(r, (r + 2) % 3, DataType::f64, 100, 0);
    const auto send = b.isend(r, (r + 1) % 3, DataType::f64, 100, 0);
    b.wait(r, recv);
    b.wait(r, send);
  }
  const Trace trace = built(b);
  EXPECT_DOUBLE_EQ(simulate(trace, kModel).step_seconds, kAlpha + 800 / kBeta);
  const CostModel with_rate = CostModel::alpha_beta(kAlpha, kBeta, 1e9);
  EXPECT_DOUBLE_EQ(simulate(trace, with_rate).step_seconds, 2.0 + kAlpha + 800 / kBeta);
}

//! Annotated traces carry virtual time through the file, and exports draw it.
TEST(VirtualTimeTest, AnnotatedTraceRoundTripsAndExportsUseIt) {
  TraceBuilder b(2);
  b.compute(0, {.flops = 1.5, .seconds = 0.25});
  b.send(0, 1, DataType::f32, 10, 3);
  b.recv(1, 0, DataType::f32, 10, 3);
  b.compute(1, {.seconds = 0.125});
  Trace trace = built(b);
  const VirtualTimes t = simulate(trace, kModel);
  annotate(trace, t);
  EXPECT_EQ(trace.ranks[0][0].vt_post_ns, 250'000'000);
  std::ostringstream out;
  write_trace(out, trace);
  const std::string text = out.str();
  // Timed, an unlabelled amount becomes one compute event that carries its times (1.2).
  EXPECT_NE(text.find(R"("compute":[{"flops":1.5,"s":0.25,"vt_start_ns":0,"vt_end_ns":250000000}])"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(R"("compute_after":[{"s":0.125,"vt_start_ns":250001040,"vt_end_ns":375001040}])"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(R"("vt_post_ns":250000000,"vt_end_ns":250001040})"), std::string::npos)
      << text;
  std::istringstream in(text);
  EXPECT_EQ(read_trace(in, "t.jsonl"), trace);

  const Timeline timeline(trace);
  EXPECT_EQ(timeline.base(), TimeBase::virtual_time);
  EXPECT_DOUBLE_EQ(timeline.at({0, 0}).start_ns, 250'000'000);
  EXPECT_DOUBLE_EQ(timeline.at({0, 0}).duration_ns, 1040);
  std::ostringstream perfetto;
  write_perfetto(perfetto, trace);
  EXPECT_EQ(nlohmann::json::parse(perfetto.str())["otherData"]["time_base"], "virtual");
}

//! A virtual time past 2^63 ns (~292 years: α = 1e10 s) saturates at kMaxTraceNs in the
//! trace instead of wrapping negative, so the written trace reads back; the text says so.
//! Times below the limit stay exact.
TEST(VirtualTimeTest, TimesPastTheInt64RangeSaturate) {
  TraceBuilder b(2);
  b.compute(0, {.seconds = 1.0});
  b.send(0, 1, DataType::u8, 8, 0);
  b.recv(1, 0, DataType::u8, 8, 0);
  Trace trace = built(b);
  const CostModel slow = CostModel::alpha_beta(1e10, 1e9);
  const VirtualTimes t = simulate(trace, slow);
  EXPECT_TRUE(exceeds_trace_time(t));
  EXPECT_FALSE(exceeds_trace_time(simulate(trace, kModel)));
  annotate(trace, t);
  EXPECT_EQ(trace.ranks[0][0].vt_post_ns, 1'000'000'000);  // the send, after 1 s of compute
  EXPECT_EQ(trace.ranks[0][0].vt_end_ns, kMaxTraceNs);
  EXPECT_EQ(trace.ranks[1][0].vt_end_ns, kMaxTraceNs);
  std::ostringstream out;
  write_trace(out, trace);
  EXPECT_NE(out.str().find(R"("vt_end_ns":9223372036854775807)"), std::string::npos) << out.str();
  std::istringstream in(out.str());
  EXPECT_EQ(read_trace(in, "t.jsonl"), trace);
  const std::string text = format_virtual_times(t, slow);
  EXPECT_NE(text.find("past 2^63 ns (about 292 years); the trace's vt_post_ns and vt_end_ns "
                      "saturate at 9223372036854775807"),
            std::string::npos)
      << text;
  EXPECT_EQ(virtual_times_to_json(t, slow)["trace_ns_saturated"], true);
}

//! The builder matches messages as MPI would: FIFO per source and tag, any-source
//! receives take what is left, and unmatched sends are reported.
TEST(TraceBuilderTest, MatchesMessagesAndReportsOrphans) {
  TraceBuilder b(3);
  b.isend(1, 0, DataType::i32, 1, 5);
  b.isend(1, 0, DataType::i32, 2, 6);
  b.isend(2, 0, DataType::i32, 3, 5);
  b.recv(0, 1, DataType::i32, 8, 6);                     // tag 6 overtakes tag 5
  b.recv(0, kNoRank, DataType::i32, 8, kAnyTagInTrace);  // any source: rank 1's tag 5
  b.isend(2, 1, DataType::i32, 4, 0);                    // nobody receives it
  BuiltTrace result = b.build();
  const auto& r0 = result.trace.ranks[0];
  EXPECT_EQ(r0[0].msg, (MessageId{1, 1}));
  EXPECT_EQ(r0[0].count, 2u);  // what it matched, as the fabric records it
  EXPECT_EQ(r0[1].msg, (MessageId{1, 0}));
  EXPECT_EQ(r0[1].peer, 1);
  EXPECT_EQ(r0[1].tag, 5);
  ASSERT_EQ(result.unmatched.size(), 2u);  // rank 2's two sends
  EXPECT_EQ(result.unmatched[0], (EventRef{2, 0}));
  EXPECT_EQ(result.trace.ranks[1][1].in_flight, (std::vector<std::uint64_t>{0}));
  EXPECT_EQ(result.trace.header.version, "1.4");
}

}  // namespace
}  // namespace ranklab

namespace ranklab {
namespace {

//! `layer=` prices every compute event with a layer (a backward twice) in place of its
//! FLOPs; FLOPs of other events still take the FLOP rate; per-rank time splits into compute
//! and communication.
TEST(VirtualTimeTest, LayerTimeAndFlopRatePriceComputeEvents) {
  TraceBuilder b(2);
  b.compute_event(0, {.label = "forward", .layer = 0, .microbatch = 0, .flops = 1e12});
  b.compute_event(0, {.label = "backward", .layer = 0, .microbatch = 0, .flops = 2e12});
  b.compute_event(0, {.label = "optimizer", .flops = 1e9});
  b.send(0, 1, DataType::u8, 1000, 0);
  b.recv(1, 0, DataType::u8, 1000, 0);
  const Trace trace = built(b);
  const CostModel layered = CostModel::parse("alpha=1e-3,beta=1e6,flops=1e12,layer=0.5");
  const VirtualTimes t = simulate(trace, layered);
  EXPECT_DOUBLE_EQ(t.ranks[0].compute, 0.5 + 1.0 + 1e-3);
  EXPECT_DOUBLE_EQ(t.ranks[0].comm, 1e-3 + 1000 / 1e6);
  EXPECT_DOUBLE_EQ(t.ranks[1].compute, 0);
  ASSERT_EQ(t.operations[0][0].compute.size(), 3u);
  EXPECT_DOUBLE_EQ(t.operations[0][0].compute[1].first, 0.5);
  EXPECT_DOUBLE_EQ(t.operations[0][0].compute[1].second, 1.5);
  // Without layer=, the FLOPs count.
  const VirtualTimes flops = simulate(trace, CostModel::parse("alpha=1e-3,beta=1e6,flops=1e12"));
  EXPECT_DOUBLE_EQ(flops.ranks[0].compute, 3.0 + 1e-3);
  const std::string text = format_virtual_times(flops, kModel);
  EXPECT_NE(text.find("compute"), std::string::npos);
  EXPECT_NE(text.find("comm"), std::string::npos);
}

//! A FLOP rate on a trace without compute, and FLOPs without a rate, are said, not silent.
TEST(VirtualTimeTest, UnusedComputePricesAreNoted) {
  TraceBuilder b(2);
  b.send(0, 1, DataType::u8, 10, 0);
  b.recv(1, 0, DataType::u8, 10, 0);
  const Trace plain = built(b);
  const CostModel rate = CostModel::parse("alpha=1e-6,beta=1e10,flops=1e12");
  EXPECT_NE(format_virtual_times(simulate(plain, rate), rate).find("records no compute"),
            std::string::npos);
  TraceBuilder c(1);
  c.compute_event(0, {.label = "forward", .flops = 5});
  c.collective(0, OpKind::barrier, DataType::u8, 0);
  const Trace flops = built(c);
  EXPECT_NE(format_virtual_times(simulate(flops, kModel), kModel).find("FLOPs only"),
            std::string::npos);
  EXPECT_EQ(format_virtual_times(simulate(flops, rate), rate).find("note:"), std::string::npos);
}

}  // namespace
}  // namespace ranklab
