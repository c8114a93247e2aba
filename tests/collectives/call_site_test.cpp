// Every Communicator call records where it was made (issue 15 §1): the trace events carry
// the site (file relative to the source tree, line, unqualified function) and the label of
// the enclosing Communicator::annotate scope; reports name them; traces stay byte-identical.
#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "collectives/cluster.hpp"
#include "comm/call_site.hpp"
#include "comm/device.hpp"
#include "tests/support/cluster_fixture.hpp"
#include "traces/jsonl.hpp"
#include "traces/sink.hpp"

namespace ranklab {
namespace {

using testing::run_ranks;

constexpr const char* kThisFile = "tests/collectives/call_site_test.cpp";

TEST(CallSite, ShortFunctionNames) {
  EXPECT_EQ(short_function_name("void ranklab::Pipeline::backward(int) const"), "backward");
  EXPECT_EQ(short_function_name("int main()"), "main");
  EXPECT_EQ(short_function_name("void f()"), "f");
  EXPECT_EQ(short_function_name(
                "ranklab::{anonymous}::step(ranklab::Communicator&)::<lambda(ranklab::Communicator&)>"),
            "step");
  EXPECT_EQ(short_function_name("void ranklab::run<T>(T&) [with T = float]"), "run");
  EXPECT_EQ(short_function_name("std::vector<int> ranklab::gather_all(int)"), "gather_all");
  EXPECT_EQ(short_function_name("void ranklab::Stage::operator()(int)"), "operator()");
  EXPECT_EQ(short_function_name("bool ranklab::operator<(const A&, const A&)"), "operator<");
  EXPECT_EQ(short_function_name("void ranklab::(anonymous namespace)::probe(int)"), "probe");
  EXPECT_EQ(short_function_name(""), "");
}

TEST(CallSite, PathsAreRelativeToTheSourceTree) {
  EXPECT_EQ(relative_source_path(__FILE__), kThisFile);
  EXPECT_EQ(relative_source_path("/elsewhere/user.cpp"), "/elsewhere/user.cpp");
  EXPECT_EQ(relative_source_path("user.cpp"), "user.cpp");
}

void labelled_program(Communicator& world, int& send_line, int& reduce_line) {
  std::vector<float> data(4, 1.0f);
  {
    const auto outer = world.annotate("outer");
    {
      const auto inner = world.annotate("TP all_reduce of layer 2 forward");
      reduce_line = __LINE__ + 1;
      world.all_reduce(std::span<float>(data));
    }
    if (world.rank() == 0) {
      send_line = __LINE__ + 1;
      world.send(std::span<const float>(data), 1);
    } else if (world.rank() == 1) {
      world.recv(std::span<float>(data), 0);
    }
  }
  world.barrier();  // no label: the scopes have ended
}

TEST(CallSite, TraceEventsCarryTheSiteAndTheLabel) {
  ClusterOptions options;
  options.world_size = 2;
  auto sink = std::make_shared<MemorySink>();
  options.trace_sink = sink;
  int send_line = 0;
  int reduce_line = 0;
  const RunReport report = run_ranks(options, [&](Communicator& world) {
    labelled_program(world, send_line, reduce_line);
  });
  ASSERT_TRUE(report.ok()) << report.summary;
  const Trace& trace = sink->trace();
  EXPECT_EQ(trace.header.version, "1.4");
  const std::vector<TraceEvent>& rank0 = trace.ranks[0];
  ASSERT_EQ(rank0.size(), 3u);
  EXPECT_EQ(rank0[0].op, OpKind::all_reduce);
  EXPECT_EQ(rank0[0].site, (CallSite{kThisFile, static_cast<std::uint32_t>(reduce_line),
                                     "labelled_program", "TP all_reduce of layer 2 forward"}));
  EXPECT_EQ(rank0[1].op, OpKind::send);
  EXPECT_EQ(rank0[1].site,
            (CallSite{kThisFile, static_cast<std::uint32_t>(send_line), "labelled_program", "outer"}));
  EXPECT_EQ(rank0[2].op, OpKind::barrier);
  EXPECT_EQ(rank0[2].site->function, "labelled_program");
  EXPECT_EQ(rank0[2].site->label, "");
}

TEST(CallSite, AnAlgorithmsMessagesCarryTheCollectivesSite) {
  ClusterOptions options;
  options.world_size = 4;
  auto sink = std::make_shared<MemorySink>();
  options.trace_sink = sink;
  int line = 0;
  const RunReport report = run_ranks(
      options,
      [&](Communicator& world) {
        std::vector<float> data(8, 1.0f);
        line = __LINE__ + 1;
        world.all_reduce(std::span<float>(data), {.algorithm = Algorithm::ring});
      },
      Algorithm::direct);
  ASSERT_TRUE(report.ok()) << report.summary;
  ASSERT_FALSE(sink->trace().ranks[2].empty());
  for (const TraceEvent& e : sink->trace().ranks[2]) {
    EXPECT_EQ(e.site->file, kThisFile);
    EXPECT_EQ(e.site->line, static_cast<std::uint32_t>(line)) << to_string(e.op);
  }
}

// The plain (blocking) forms take three ways down to the backend: a member's native call on
// host buffers hands its site down with the call (Backend::native_collective_blocking);
// a device buffer's native call is staged and an all_to_all checked for aliasing first
// (the site set, then handed on); another algorithm sends messages. Each records the
// caller's line.
TEST(CallSite, EveryWayOfABlockingCallRecordsTheCallersLine) {
  ClusterOptions options;
  options.world_size = 2;
  auto sink = std::make_shared<MemorySink>();
  options.trace_sink = sink;
  std::vector<int> lines;
  const RunReport report = run_ranks(
      options,
      [&](Communicator& world) {
        std::vector<float> data(2, 1.0f);
        std::vector<float> out(2);
        const CpuStagedMemory memory(world.rank());
        const auto line = [&](int at) {
          if (world.rank() == 0) lines.push_back(at);
        };
        line(__LINE__ + 1);
        world.all_reduce(std::span<float>(data));
        line(__LINE__ + 1);
        world.all_reduce(MutableBuffer{data.data(), data.size(), DataType::f32, &memory});
        line(__LINE__ + 1);
        world.all_to_all(std::span<const float>(data), std::span<float>(out));
        line(__LINE__ + 1);
        world.broadcast(std::span<float>(data), {.algorithm = Algorithm::tree});
        line(__LINE__ + 1);
        world.barrier();
      },
      Algorithm::direct);
  ASSERT_TRUE(report.ok()) << report.summary;
  for (const std::vector<TraceEvent>& events : sink->trace().ranks) {
    std::vector<int> seen;  // the line of each call, once however many events it made
    for (const TraceEvent& e : events) {
      ASSERT_FALSE(e.site.empty()) << to_string(e.op);
      EXPECT_EQ(e.site->file, kThisFile);
      const int at = static_cast<int>(e.site->line);
      if (seen.empty() || seen.back() != at) seen.push_back(at);
    }
    EXPECT_EQ(seen, lines);
  }
}

TEST(CallSite, TracesWithSitesAreByteIdentical) {
  auto text = [] {
    ClusterOptions options;
    options.world_size = 2;
    auto sink = std::make_shared<MemorySink>();
    options.trace_sink = sink;
    int a = 0, b = 0;
    const RunReport report =
        run_ranks(options, [&](Communicator& world) { labelled_program(world, a, b); });
    EXPECT_TRUE(report.ok());
    std::ostringstream out;
    write_trace(out, sink->trace());
    return out.str();
  };
  const std::string first = text();
  EXPECT_EQ(first, text());
  EXPECT_NE(first.find(R"("site":{"file":"tests/collectives/call_site_test.cpp","function":"labelled_program","label":"outer","line":)"),
            std::string::npos)
      << first;
  EXPECT_EQ(first.find("/work/"), std::string::npos);  // no absolute path of this machine
}

TEST(CallSite, OffRecordsNone) {
  ClusterOptions options;
  options.world_size = 2;
  options.call_sites = false;
  auto sink = std::make_shared<MemorySink>();
  options.trace_sink = sink;
  int a = 0, b = 0;
  ASSERT_TRUE(run_ranks(options, [&](Communicator& world) { labelled_program(world, a, b); }).ok());
  for (const auto& events : sink->trace().ranks) {
    for (const TraceEvent& e : events) EXPECT_TRUE(e.site.empty());
  }
}

TEST(CallSite, DeadlockReportNamesTheBlockedCallsSites) {
  ClusterOptions options;
  options.world_size = 2;
  int line = 0;
  const RunReport report = run_ranks(options, [&](Communicator& world) {
    std::vector<float> data(4);
    const auto label = world.annotate("PP recv of micro-batch 0 activation");
    line = __LINE__ + 1;
    world.recv(std::span<float>(data), 1 - world.rank());
  });
  ASSERT_EQ(report.status, RunStatus::deadlock);
  const std::string site = std::string(" at ") + kThisFile + ":" + std::to_string(line) +
                           " (TestBody) for \"PP recv of micro-batch 0 activation\"";
  EXPECT_NE(report.details.find("  rank 0: recv from rank 1 tag 0 in world (4 x f32), op #0" + site + "\n"),
            std::string::npos)
      << report.details;
  EXPECT_NE(report.details.find("  rank 1: recv from rank 0 tag 0 in world (4 x f32), op #0" + site + "\n"),
            std::string::npos)
      << report.details;
}

TEST(CallSite, MismatchTableNamesEachMembersSite) {
  ClusterOptions options;
  options.world_size = 2;
  int line0 = 0, line1 = 0;
  const RunReport report = run_ranks(options, [&](Communicator& world) {
    std::vector<float> data(4);
    if (world.rank() == 0) {
      line0 = __LINE__ + 1;
      world.all_reduce(std::span<float>(data));
    } else {
      line1 = __LINE__ + 1;
      world.broadcast(std::span<float>(data));
    }
  });
  ASSERT_EQ(report.status, RunStatus::mismatch);
  for (int line : {line0, line1}) {
    EXPECT_NE(report.details.find(std::string(" at ") + kThisFile + ":" + std::to_string(line) +
                                  " (TestBody)"),
              std::string::npos)
        << report.details;
  }
}

}  // namespace
}  // namespace ranklab
