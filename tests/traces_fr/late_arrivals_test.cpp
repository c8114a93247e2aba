// Late arrivals from Flight Recorder timestamps (issue 29 §2): a rank that entered a
// collective seconds after the others is named when the clocks are known to agree, not when
// a consistent clock offset explains the gap, and nothing is claimed when no completed
// collective bounds the clocks; the fields the format lacks are named as unknown.
#include "traces/late_arrivals.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "traces/flight_recorder.hpp"
#include "traces/flight_recorder_notes.hpp"

namespace ranklab {
namespace {

using nlohmann::json;

constexpr std::int64_t kEpoch = 1'700'000'000'000'000'000;
constexpr std::int64_t kMs = 1'000'000;

/// Four ranks, all_reduces on each. entered[r][k] / ended[r][k]: ms after kEpoch on rank r's
/// clock (a negative end: not completed).
Trace import_times(const std::vector<std::vector<std::int64_t>>& entered,
                   const std::vector<std::vector<std::int64_t>>& ended) {
  std::vector<FrDumpFile> files;
  for (std::size_t r = 0; r < entered.size(); ++r) {
    json entries = json::array();
    for (std::size_t k = 0; k < entered[r].size(); ++k) {
      const bool done = ended[r][k] >= 0;
      entries.push_back({{"record_id", k}, {"pg_id", 0}, {"process_group", {"0", "default_pg"}},
                         {"collective_seq_id", k + 1}, {"p2p_seq_id", 0}, {"op_id", k + 1},
                         {"profiling_name", "nccl:all_reduce"},
                         {"time_created_ns", kEpoch + entered[r][k] * kMs},
                         {"input_sizes", {{8}}}, {"input_dtypes", {"Float"}},
                         {"output_sizes", {{8}}}, {"output_dtypes", {"Float"}},
                         {"state", done ? "completed" : "started"},
                         {"time_discovered_started_ns", kEpoch + entered[r][k] * kMs},
                         {"time_discovered_completed_ns",
                          done ? kEpoch + ended[r][k] * kMs : 0},
                         {"thread_name", "pt_main_thread"}, {"thread_id", "7"}, {"is_p2p", false}});
    }
    const json dump = {{"version", "2.10"},
                       {"pg_config", {{"0", {{"name", "0"}, {"desc", "default_pg"}, {"ranks", "[0, 1, 2, 3]"}}}}},
                       {"entries", entries}};
    files.push_back({"nccl_trace_rank_" + std::to_string(r) + ".json", dump.dump()});
  }
  return import_flight_recorder(files);
}

//! Rank 3 enters the second all_reduce 4.2 s after the others while every completion agrees
//! to 2 ms: named, with the bound that rules out the clocks.
TEST(LateArrivalTest, NamesTheRankThatEnteredLate) {
  const std::vector<std::vector<std::int64_t>> entered = {
      {0, 10'000, 20'000}, {1, 10'001, 20'000}, {0, 10'002, 20'001}, {2, 14'202, 20'000}};
  const std::vector<std::vector<std::int64_t>> ended = {
      {1'000, 15'000, 21'000}, {1'001, 15'002, 21'000}, {1'000, 15'001, 21'001}, {1'002, 15'002, 21'000}};
  const Trace trace = import_times(entered, ended);
  const ArrivalCheck check = check_arrivals(trace, false);
  ASSERT_EQ(check.late.size(), 1u);
  EXPECT_EQ(check.late[0].rank, 3);
  EXPECT_EQ(check.late[0].coll_seq, 1);
  EXPECT_EQ(check.late[0].late_by_ns, std::int64_t{4'200'000'000});
  EXPECT_EQ(check.clock_spread_ns, 2'000'000);
  const std::string notes = format_flight_recorder_notes(trace);
  EXPECT_NE(notes.find("  rank 3 entered all_reduce #1 of world 4.2 s after the others (host clocks "
                       "agree to within 2 ms on the 3 collectives every rank completed)\n"),
            std::string::npos)
      << notes;
  EXPECT_NE(notes.find("reduce op, root, tag and all_to_all split sizes are not in Flight Recorder "
                       "dumps: unknown;"),
            std::string::npos)
      << notes;
  EXPECT_EQ(flight_recorder_notes_json(trace).at("late_arrivals").at(0).at("rank"), 3);
}

//! Rank 1's clock runs 4.2 s ahead: every stamp of it is late by as much, completions too,
//! so the clocks explain the gap and no lateness is claimed.
TEST(LateArrivalTest, AClockOffsetIsNotLateness) {
  const std::vector<std::vector<std::int64_t>> entered = {
      {0, 10'000, 20'000}, {4'200, 14'200, 24'200}, {0, 10'000, 20'000}, {0, 10'000, 20'000}};
  const std::vector<std::vector<std::int64_t>> ended = {
      {1'000, 11'000, 21'000}, {5'200, 15'200, 25'200}, {1'000, 11'000, 21'000}, {1'000, 11'000, 21'000}};
  const Trace trace = import_times(entered, ended);
  const ArrivalCheck check = check_arrivals(trace, false);
  EXPECT_TRUE(check.late.empty());
  EXPECT_EQ(check.clock_spread_ns, std::int64_t{4'200'000'000});
  const auto lines = describe_arrivals(check, trace.header);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "  no rank entered a collective more than 4.2 s after the others (3 collectives "
                      "compared; host clocks agree to within 4.2 s on the 3 collectives every rank "
                      "completed)");
  // On one clock (ranklab's own dumps) the same stamps are lateness: rank 1, each time.
  EXPECT_EQ(check_arrivals(trace, true).late.size(), 3u);
}

//! Hung in the first collective on every rank: nothing completed, nothing bounds the clocks.
TEST(LateArrivalTest, NothingClaimedWithoutACompletedCollective) {
  const Trace trace = import_times({{0}, {0}, {0}, {9'000}}, {{-1}, {-1}, {-1}, {-1}});
  const ArrivalCheck check = check_arrivals(trace, false);
  EXPECT_TRUE(check.late.empty());
  EXPECT_EQ(check.clock_spread_ns, -1);
  EXPECT_NE(describe_arrivals(check, trace.header).at(0).find("cannot be compared"), std::string::npos);
}

//! Durations read as a person writes them.
TEST(LateArrivalTest, Durations) {
  EXPECT_EQ(format_duration_ns(4'200'000'000), "4.2 s");
  EXPECT_EQ(format_duration_ns(35'000'000), "35 ms");
  EXPECT_EQ(format_duration_ns(12'000), "12 us");
  EXPECT_EQ(format_duration_ns(800), "800 ns");
}

}  // namespace
}  // namespace ranklab
