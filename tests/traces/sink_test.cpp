// Trace sinks: per-rank order comes from rank_seq, never from the order of record() calls,
// so a file depends on the program and policy only.
#include "traces/sink.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/expect_throw_msg.hpp"
#include "tests/traces/sample_trace.hpp"
#include "traces/error.hpp"
#include "traces/jsonl.hpp"

namespace ranklab {
namespace {

using trace_samples::sample_trace;

/// Every event of `trace`, rank by rank in order.
std::vector<TraceEvent> all_events(const Trace& trace) {
  std::vector<TraceEvent> events;
  for (const auto& rank_events : trace.ranks) {
    events.insert(events.end(), rank_events.begin(), rank_events.end());
  }
  return events;
}

/// A fixed permutation that mixes ranks and reverses rank_seq order within each rank.
std::vector<TraceEvent> scrambled(std::vector<TraceEvent> events) {
  std::reverse(events.begin(), events.end());
  std::vector<TraceEvent> mixed;
  for (std::size_t stride_start : {0U, 2U, 1U}) {
    for (std::size_t i = stride_start; i < events.size(); i += 3) mixed.push_back(events[i]);
  }
  return mixed;
}

std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// A per-test, per-process path in the temporary directory, removed on destruction.
class TempPath {
 public:
  explicit TempPath(const std::string& stem)
      : path_(std::filesystem::temp_directory_path() /
              (stem + "_" + std::to_string(::getpid()) + ".jsonl")) {}
  ~TempPath() {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

//! MemorySink orders each rank by rank_seq whatever order record() saw.
TEST(SinkTest, MemorySinkOrdersByRankSeq) {
  const Trace expected = sample_trace();
  MemorySink sink;
  for (const TraceEvent& event : scrambled(all_events(expected))) sink.record(event);
  sink.finish(expected.header);
  EXPECT_EQ(sink.trace(), expected);
}

//! finish() sizes the ranks to world_size, so silent ranks are present and empty.
TEST(SinkTest, MemorySinkSizesRanksToWorld) {
  MemorySink sink;
  sink.record(trace_samples::p2p_event(OpKind::send, 1, 0, 0, 0, {1, 0}, 1));
  TraceHeader header;
  header.world_size = 4;
  header.groups = {{"world", {0, 1, 2, 3}}};
  sink.finish(header);
  ASSERT_EQ(sink.trace().ranks.size(), 4U);
  EXPECT_TRUE(sink.trace().ranks[0].empty());
  EXPECT_EQ(sink.trace().ranks[1].size(), 1U);
  EXPECT_TRUE(sink.trace().ranks[3].empty());
  EXPECT_EQ(sink.trace().header, header);
}

//! Events of a rank outside the world, or a negative rank, are refused, not dropped.
TEST(SinkTest, MemorySinkRejectsRanksOutsideTheWorld) {
  MemorySink sink;
  sink.record(trace_samples::p2p_event(OpKind::send, 5, 0, 0, 0, {5, 0}, 1));
  EXPECT_THROW_MSG(sink.finish(trace_samples::sample_header()), UsageError,
                   "trace sink: rank 5 recorded events but world_size is 4");
  EXPECT_THROW_MSG(sink.record(trace_samples::p2p_event(OpKind::send, -1, 0, 0, 0, {}, 1)),
                   UsageError, "trace sink: event with negative rank -1");
}

//! record_moved() keeps the same trace as record() (every field, vectors and site
//! included), and the rank checks are the same.
TEST(SinkTest, MemorySinkRecordMovedKeepsWhatRecordKeeps) {
  Trace expected = sample_trace();
  TraceEvent& first = expected.ranks[0].front();  // the sample has in_flight, not these
  first.compute.add(ComputeItem{.label = "forward", .layer = 1, .flops = 8});
  first.site = CallSite{.file = "model/step.cpp", .line = 7, .function = "step", .label = "tp"};
  MemorySink sink;
  JsonlFileSink file_sink(std::filesystem::temp_directory_path() / "ranklab_sink_unused.jsonl");
  for (TraceEvent event : scrambled(all_events(expected))) {
    file_sink.record_moved(TraceEvent(event));
    sink.record_moved(std::move(event));
  }
  sink.finish(expected.header);
  EXPECT_EQ(sink.trace(), expected);
  for (int rank = 0; rank < expected.header.world_size; ++rank) {
    const auto& want = expected.ranks[static_cast<std::size_t>(rank)];
    const auto got = file_sink.recorded(rank);
    EXPECT_EQ(got.size(), want.size()) << "rank " << rank;
  }
  EXPECT_THROW_MSG(sink.record_moved(trace_samples::p2p_event(OpKind::send, -1, 0, 0, 0, {}, 1)),
                   UsageError, "trace sink: event with negative rank -1");
}

//! record() from several threads at once loses nothing.
TEST(SinkTest, MemorySinkIsThreadSafe) {
  constexpr int kWorld = 4;
  constexpr std::uint64_t kPerRank = 2000;
  const Trace expected = trace_samples::large_trace(kWorld, kPerRank);
  MemorySink sink;
  std::vector<std::thread> threads;
  for (int r = 0; r < kWorld; ++r) {
    threads.emplace_back([&, r] {
      const auto& events = expected.ranks[static_cast<std::size_t>(r)];
      for (auto it = events.rbegin(); it != events.rend(); ++it) sink.record(*it);
    });
  }
  for (std::thread& thread : threads) thread.join();
  sink.finish(expected.header);
  EXPECT_EQ(sink.trace(), expected);
}

//! JsonlFileSink writes the same bytes for the same events recorded in different orders,
//! and the file reads back as the trace.
TEST(SinkTest, JsonlFileSinkIsOrderIndependent) {
  const Trace expected = sample_trace();
  const TempPath first("ranklab_sink_first");
  const TempPath second("ranklab_sink_second");
  JsonlFileSink in_order(first.path());
  JsonlFileSink out_of_order(second.path());
  for (const TraceEvent& event : all_events(expected)) in_order.record(event);
  for (const TraceEvent& event : scrambled(all_events(expected))) out_of_order.record(event);
  in_order.finish(expected.header);
  out_of_order.finish(expected.header);

  const std::string bytes = read_bytes(first.path());
  EXPECT_FALSE(bytes.empty());
  EXPECT_EQ(read_bytes(second.path()), bytes);
  EXPECT_EQ(bytes, trace_samples::to_text(expected));
  EXPECT_EQ(read_trace_file(first.path()), expected);
  EXPECT_EQ(in_order.path(), first.path());
}

//! A sink whose file cannot be written fails at finish() with the path in the message.
TEST(SinkTest, JsonlFileSinkReportsUnwritablePath) {
  JsonlFileSink sink("/nonexistent-ranklab-dir/run.jsonl");
  sink.record(trace_samples::p2p_event(OpKind::send, 0, 0, 1, 0, {0, 0}, 1));
  EXPECT_THROW_MSG(sink.finish(sample_trace().header), TraceError,
                   "/nonexistent-ranklab-dir/run.jsonl: cannot write the trace "
                   "(No such file or directory)");
}

}  // namespace
}  // namespace ranklab
