// `export --flight-recorder` checked against the format's source, field by field: every key
// and type torch's FlightRecorderDetail.hpp writes (getCollectiveTrace for the pickle,
// dump_json for the JSON) and every one the analyzer (torch/distributed/flight_recorder:
// loader.read_dump, builder.build_groups_memberships, types.Op and Op.match,
// utils.find_coalesced_group*) reads; the analyzer's matching rules on a healthy job's
// collectives; the round trip through ranklab's own importer; and the folder rules.
#include "traces/export_flight_recorder.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <fstream>
#include <ostream>
#include <map>
#include <regex>
#include <set>

#include "tests/support/expect_throw_msg.hpp"
#include "tests/support/temp_dir.hpp"
#include "traces/error.hpp"
#include "traces/flight_recorder.hpp"
#include "traces/jsonl.hpp"
#include "traces/pickle_reader.hpp"

namespace ranklab {
namespace {

using nlohmann::json;

std::filesystem::path example(const std::string& name) {
  return std::filesystem::path(RANKLAB_SOURCE_DIR) / "traces" / "examples" / name;
}

/// The dump of every rank, read back from its bytes as a consumer reads it.
std::map<int, json> dumps_of(const Trace& trace, FrDumpForm form) {
  std::map<int, json> out;
  for (int rank : flight_recorder_ranks(trace)) {
    const std::string bytes = flight_recorder_file(trace, rank, form);
    out[rank] = form == FrDumpForm::pickle ? read_pickle(bytes, "dump") : json::parse(bytes);
  }
  return out;
}

/// The analyzer's vocabulary (types.py COLLECTIVES, P2P and "coalesced").
const std::set<std::string> kAnalyzerOps = {
    "broadcast", "reduce", "all_gather", "all_reduce", "_all_gather_base", "reduce_scatter",
    "_reduce_scatter_base", "gather", "scatter", "all_to_all", "all_to_all_single",
    "all_reduce_barrier", "barrier", "send", "recv", "coalesced"};

void expect_int(const json& v, const std::string& what) {
  EXPECT_TRUE(v.is_number_integer()) << what << " is " << v.dump();
}

void expect_shapes(const json& sizes, const json& dtypes, const std::string& what) {
  ASSERT_TRUE(sizes.is_array()) << what;
  ASSERT_TRUE(dtypes.is_array()) << what;
  EXPECT_EQ(sizes.size(), dtypes.size()) << what;
  for (const json& shape : sizes) {
    ASSERT_TRUE(shape.is_array()) << what;
    for (const json& dim : shape) expect_int(dim, what);
  }
  for (const json& d : dtypes) {
    EXPECT_TRUE(d == "Float" || d == "Double" || d == "Int" || d == "Long" || d == "Byte") << what << d;
  }
}

/// Every key torch writes, with its type, in torch's order for the pickle.
void check_fields(const json& doc, FrDumpForm form, int rank) {
  const bool pickle = form == FrDumpForm::pickle;
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(doc.at("version"), "2.10");
  EXPECT_EQ(doc.at("comm_lib_version"), "ranklab");
  // pg_config: what build_groups_memberships reads (desc; ranks through ast.literal_eval).
  const std::regex ranks_text(R"(\[(\d+(, \d+)*)?\])");
  for (const auto& [name, pg] : doc.at("pg_config").items()) {
    EXPECT_EQ(pg.at("name"), name);
    EXPECT_TRUE(pg.at("desc").is_string());
    ASSERT_TRUE(pg.at("ranks").is_string());
    EXPECT_TRUE(std::regex_match(pg.at("ranks").get<std::string>(), ranks_text)) << pg.at("ranks");
  }
  EXPECT_EQ(doc.at("pg_config").at("0").at("desc"), "default_pg");
  for (const auto& [id, status] : doc.at("pg_status").items()) {
    for (const char* key : {"last_enqueued_collective", "last_started_collective", "last_completed_collective"}) {
      EXPECT_TRUE(pickle ? status.at(key).is_number_integer() : status.at(key).is_string()) << key;
    }
  }
  if (!doc.contains("entries")) return;  // dump_json leaves an empty list out
  static const std::vector<std::string> kPickleKeys = {
      "frames", "record_id", "pg_id", "process_group", "thread_name", "thread_id",
      "collective_seq_id", "p2p_seq_id", "op_id", "profiling_name", "time_created_ns",
      "input_sizes", "input_dtypes", "output_sizes", "output_dtypes", "state",
      "time_discovered_started_ns", "time_discovered_completed_ns", "retired", "timeout_ms",
      "is_p2p"};
  const std::regex p2p_name(R"(nccl:(send (\d+)->(\d+)|recv (\d+)<-(\d+)))");
  std::size_t index = 0;
  for (const json& e : doc.at("entries")) {
    const std::string at = fmt::format("rank {} entry {}", rank, index);
    std::vector<std::string> keys;
    for (const auto& [key, value] : e.items()) keys.push_back(key);
    std::vector<std::string> expected = kPickleKeys;
    if (!pickle) expected.erase(expected.begin());  // dump_json writes no frames
    std::sort(expected.begin(), expected.end());
    std::sort(keys.begin(), keys.end());
    EXPECT_EQ(keys, expected) << at;
    EXPECT_EQ(e.at("record_id"), index) << at;  // align_trace_from_beginning
    expect_int(e.at("pg_id"), at);
    ASSERT_TRUE(e.at("process_group").is_array() && e.at("process_group").size() == 2) << at;
    EXPECT_TRUE(doc.at("pg_config").contains(e.at("process_group")[0].get<std::string>())) << at;
    EXPECT_TRUE(e.at("thread_name").is_string() && e.at("thread_id").is_string()) << at;
    for (const char* key : {"collective_seq_id", "p2p_seq_id", "op_id", "time_created_ns", "timeout_ms"}) {
      expect_int(e.at(key), at + " " + key);
    }
    const std::string name = e.at("profiling_name");
    ASSERT_TRUE(name.starts_with("nccl:")) << at;  // Op: the backend must be nccl or xccl
    const std::string op = name.substr(5, name.find(' ') == std::string::npos ? std::string::npos : name.find(' ') - 5);
    EXPECT_EQ(kAnalyzerOps.count(op), 1u) << at << " " << name;
    const bool p2p = op == "send" || op == "recv";
    if (p2p) { EXPECT_TRUE(std::regex_match(name, p2p_name)) << at << name; }
    if (op != "coalesced") { EXPECT_EQ(e.at("is_p2p"), p2p) << at; }
    expect_shapes(e.at("input_sizes"), e.at("input_dtypes"), at + " input");
    expect_shapes(e.at("output_sizes"), e.at("output_dtypes"), at + " output");
    const std::string state = e.at("state");
    EXPECT_TRUE(state == "completed" || state == "started" || state == "scheduled") << at;
    const json& started = e.at("time_discovered_started_ns");
    const json& completed = e.at("time_discovered_completed_ns");
    const auto absent = [pickle](const json& v) { return pickle ? v.is_null() : v == 0; };
    EXPECT_EQ(absent(started), state == "scheduled") << at;
    EXPECT_EQ(absent(completed), state != "completed") << at;
    if (!absent(started)) { EXPECT_GE(started.get<std::int64_t>(), e.at("time_created_ns").get<std::int64_t>()) << at; }
    if (!absent(completed)) { EXPECT_GE(completed.get<std::int64_t>(), started.get<std::int64_t>()) << at; }
    EXPECT_EQ(e.at("retired"), state == "completed") << at;
    if (pickle) {
      ASSERT_TRUE(e.at("frames").is_array()) << at;
      for (const json& f : e.at("frames")) {
        EXPECT_TRUE(f.at("name").is_string() && f.at("filename").is_string()) << at;
        expect_int(f.at("line"), at);
      }
    }
    ++index;
  }
}

std::uint64_t numel(const json& shape) {
  std::uint64_t n = 1;
  for (const json& d : shape) n *= d.get<std::uint64_t>();
  return n;
}

/// Op.match of the analyzer for collectives, between the entries of one collective on
/// every rank of its group: the same name, sizes and dtypes, and its syntax rules.
void check_collectives_match(const std::map<int, json>& dumps) {
  std::map<std::pair<std::string, std::int64_t>, std::vector<json>> by_collective;
  std::map<std::string, std::size_t> group_size;
  for (const auto& [rank, doc] : dumps) {
    for (const auto& [name, pg] : doc.at("pg_config").items()) {
      group_size[name] = json::parse(pg.at("ranks").get<std::string>()).size();
    }
    for (const json& e : doc.value("entries", json::array())) {
      if (e.at("is_p2p")) continue;
      by_collective[{e.at("process_group")[0], e.at("collective_seq_id")}].push_back(e);
    }
  }
  ASSERT_FALSE(by_collective.empty());
  for (const auto& [key, entries] : by_collective) {
    const std::string at = fmt::format("pg {} collective {}", key.first, key.second);
    EXPECT_EQ(entries.size(), group_size[key.first]) << at;
    const json& first = entries.front();
    const std::string type = first.at("profiling_name").get<std::string>().substr(5);
    for (const json& other : entries) {
      EXPECT_EQ(other.at("profiling_name"), first.at("profiling_name")) << at;
      if (type != "all_to_all" && type != "scatter") { EXPECT_EQ(other.at("input_sizes"), first.at("input_sizes")) << at; }
      if (type != "all_to_all" && type != "gather") { EXPECT_EQ(other.at("output_sizes"), first.at("output_sizes")) << at; }
      if (type == "all_reduce") { EXPECT_EQ(first.at("input_sizes"), other.at("output_sizes")) << at; }
      if (type == "all_gather") {
        EXPECT_EQ(numel(other.at("output_sizes")[0]), numel(first.at("input_sizes")[0]) * group_size[key.first]) << at;
      }
      if (type == "reduce_scatter") {
        EXPECT_EQ(numel(other.at("input_sizes")[0]), numel(first.at("output_sizes")[0]) * group_size[key.first]) << at;
      }
      EXPECT_EQ(other.at("state"), first.at("state")) << at;
    }
  }
}

class FrExportFieldsTest
    : public ::testing::TestWithParam<std::tuple<const char*, FrDumpForm>> {};

//! Every dump of every example trace has the format's keys with the format's types.
TEST_P(FrExportFieldsTest, KeysAndTypesAsTorchWritesThem) {
  const auto [name, form] = GetParam();
  const Trace trace = read_trace_file(example(name));
  const std::map<int, json> dumps = dumps_of(trace, form);
  EXPECT_EQ(dumps.size(), trace.ranks.size());
  for (const auto& [rank, doc] : dumps) check_fields(doc, form, rank);
}

INSTANTIATE_TEST_SUITE_P(
    Examples, FrExportFieldsTest,
    ::testing::Combine(::testing::Values("seed_step_w8.jsonl", "allreduce_w8.jsonl",
                                         "allreduce_ring_w4.jsonl", "send_send_deadlock.jsonl",
                                         "missing_barrier_deadlock.jsonl", "wildcard_race.jsonl"),
                       ::testing::Values(FrDumpForm::pickle, FrDumpForm::json)));

//! The pickle's keys come in torch's order (getCollectiveTrace inserts them so).
TEST(FrExportTest, PickleKeysInTorchsOrder) {
  const Trace trace = read_trace_file(example("allreduce_w8.jsonl"));
  const nlohmann::ordered_json doc = flight_recorder_dump(trace, 0, FrDumpForm::pickle);
  std::vector<std::string> top;
  for (const auto& [key, value] : doc.items()) top.push_back(key);
  EXPECT_EQ(top, (std::vector<std::string>{"version", "pg_config", "comm_lib_version", "pg_status", "entries"}));
  EXPECT_EQ(doc.at("entries").at(0).begin().key(), "frames");
  EXPECT_EQ(doc.at("entries").at(0).items().begin().key(), "frames");
}

//! A healthy 3-D step's collectives match on every rank by the analyzer's rules.
TEST(FrExportTest, HealthyCollectivesMatchAsTheAnalyzerChecks) {
  check_collectives_match(dumps_of(read_trace_file(example("seed_step_w8.jsonl")), FrDumpForm::pickle));
  check_collectives_match(dumps_of(read_trace_file(example("allreduce_w8.jsonl")), FrDumpForm::pickle));
}

//! The shapes torch records, per collective: all_gather's output is the group times its
//! input, a barrier is a one-Float all_reduce_barrier, sends name group ranks.
TEST(FrExportTest, NamesAndShapesOfOperations) {
  const Trace trace = read_trace_file(example("seed_step_w8.jsonl"));
  const json doc = read_pickle(flight_recorder_file(trace, 0, FrDumpForm::pickle), "d");
  std::set<std::string> names;
  for (const json& e : doc.at("entries")) names.insert(e.at("profiling_name"));
  EXPECT_TRUE(names.count("nccl:all_reduce")) << doc.dump();
  const Trace barrier = read_trace_file(example("missing_barrier_deadlock.jsonl"));
  const json b = read_pickle(flight_recorder_file(barrier, 0, FrDumpForm::pickle), "d").at("entries").at(0);
  EXPECT_EQ(b.at("profiling_name"), "nccl:all_reduce_barrier");
  EXPECT_EQ(b.at("input_sizes"), json::parse("[[1]]"));
  EXPECT_EQ(b.at("input_dtypes"), json::parse(R"(["Float"])"));
  EXPECT_EQ(b.at("state"), "started");  // hung in it: the kernel was launched
  const Trace sends = read_trace_file(example("send_send_deadlock.jsonl"));
  const json s = read_pickle(flight_recorder_file(sends, 1, FrDumpForm::pickle), "d").at("entries").at(0);
  EXPECT_EQ(s.at("profiling_name"), "nccl:send 1->0");
  EXPECT_EQ(s.at("p2p_seq_id"), 1);
  EXPECT_EQ(s.at("collective_seq_id"), 0);
  EXPECT_EQ(s.at("frames").at(0).at("filename"), "cli/scenarios/basic.cpp");
}

/// What an importer keeps of an operation: enough to replay it the same way.
struct Op {
  OpKind op;
  OpStatus status;
  int peer;
  DataType dtype;
  std::uint64_t count;
  std::string group;
  std::int64_t coll_seq;
  CallSite site;
  friend bool operator==(const Op&, const Op&) = default;
  friend std::ostream& operator<<(std::ostream& out, const Op& op) {
    return out << fmt::format("{} {} peer {} {} x {} {} coll_seq {} at {}:{}", to_string(op.op),
                              to_string(op.status), op.peer, op.count, to_string(op.dtype), op.group,
                              op.coll_seq, op.site.file, op.site.line);
  }
};
std::vector<std::vector<Op>> ops_of(const Trace& t) {
  std::vector<std::vector<Op>> out;
  for (const auto& events : t.ranks) {
    out.emplace_back();
    for (const TraceEvent& e : events) {
      const int root_or_peer = e.op == OpKind::send || e.op == OpKind::recv ? e.peer : kNoRank;
      out.back().push_back({e.op, e.status, root_or_peer, e.dtype, e.count,
                            t.header.groups[e.group].name, e.coll_seq, *e.site});
    }
  }
  return out;
}

class FrExportRoundTripTest : public ::testing::TestWithParam<std::tuple<const char*, FrDumpForm>> {};

//! Exported and imported again, a trace has the same groups and, per rank, the same
//! operations (kind, state, peer, type, count, group, collective index, call site but its
//! label: pickle).
TEST_P(FrExportRoundTripTest, ImportGivesTheSameOperations) {
  const auto [name, form] = GetParam();
  const Trace trace = read_trace_file(example(name));
  std::vector<FrDumpFile> files;
  for (int rank : flight_recorder_ranks(trace)) {
    files.push_back({flight_recorder_file_name(rank, form), flight_recorder_file(trace, rank, form)});
  }
  const Trace back = import_flight_recorder(files);
  EXPECT_EQ(back.header.groups, trace.header.groups);
  auto expected = ops_of(trace);
  for (auto& ops : expected) {
    for (Op& op : ops) {
      op.site.label.clear();  // a frame is {name, filename, line}: no place for a label
      if (form == FrDumpForm::json) op.site = {};  // JSON dumps carry no frames
    }
  }
  EXPECT_EQ(ops_of(back), expected);
}

INSTANTIATE_TEST_SUITE_P(
    Examples, FrExportRoundTripTest,
    ::testing::Combine(::testing::Values("seed_step_w8.jsonl", "allreduce_w8.jsonl",
                                         "allreduce_ring_w4.jsonl", "send_send_deadlock.jsonl",
                                         "missing_barrier_deadlock.jsonl"),
                       ::testing::Values(FrDumpForm::pickle, FrDumpForm::json)));

//! Sends and receives posted together (a batch_isend_irecv ring, as the healthy example's
//! dumps record it) go out as one coalesced batch: one p2p_seq_id, then "nccl:coalesced".
TEST(FrExportTest, PostedTogetherIsACoalescedBatch) {
  const Trace trace = read_flight_recorder(
      {std::filesystem::path(RANKLAB_SOURCE_DIR) / "traces" / "examples" / "fr" / "healthy"});
  const json entries = read_pickle(flight_recorder_file(trace, 1, FrDumpForm::pickle), "d").at("entries");
  ASSERT_GE(entries.size(), 5u);
  EXPECT_EQ(entries[2].at("profiling_name"), "nccl:send 1->2");
  EXPECT_EQ(entries[3].at("profiling_name"), "nccl:recv 1<-0");
  EXPECT_EQ(entries[4].at("profiling_name"), "nccl:coalesced");
  for (std::size_t i : {3u, 4u}) {
    EXPECT_EQ(entries[i].at("p2p_seq_id"), entries[2].at("p2p_seq_id"));
    EXPECT_EQ(entries[i].at("collective_seq_id"), entries[2].at("collective_seq_id"));
  }
  EXPECT_EQ(entries[4].at("input_sizes"), json::array());
  EXPECT_EQ(entries[5].at("collective_seq_id"), entries[1].at("collective_seq_id").get<int>() + 1);
}

//! Virtual time goes out as the entries' times and comes back as the operations' times, the
//! run's start (0 ns) included: time_created_ns 0 is a time, not "never" (it was lost).
TEST(FrExportTest, VirtualTimeRoundTrips) {
  Trace trace = read_trace_file(example("allreduce_w8.jsonl"));
  for (auto& events : trace.ranks) {
    for (TraceEvent& e : events) {
      e.vt_post_ns = static_cast<std::int64_t>(e.lamport - 1) * 1'000 + e.rank;
      e.vt_end_ns = e.vt_post_ns + 700;
    }
  }
  for (const FrDumpForm form : {FrDumpForm::pickle, FrDumpForm::json}) {
    std::vector<FrDumpFile> files;
    for (int rank : flight_recorder_ranks(trace)) {
      files.push_back({flight_recorder_file_name(rank, form), flight_recorder_file(trace, rank, form)});
    }
    const Trace back = import_flight_recorder(files);
    for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
      ASSERT_EQ(back.ranks[r].size(), trace.ranks[r].size());
      for (std::size_t i = 0; i < trace.ranks[r].size(); ++i) {
        EXPECT_EQ(back.ranks[r][i].vt_post_ns, trace.ranks[r][i].vt_post_ns) << r << " " << i;
        EXPECT_EQ(back.ranks[r][i].vt_end_ns, trace.ranks[r][i].vt_end_ns) << r << " " << i;
      }
    }
    EXPECT_EQ(back.header.config.at("time").at("one_clock"), true);
  }
}

//! Export writes into a new folder, replaces its own earlier dumps, and refuses a folder
//! holding any other file named nccl_trace_rank_* (a real job's dump, the other form).
TEST(FrExportFolderTest, ReplacesOnlyItsOwnDumps) {
  const Trace trace = read_trace_file(example("send_send_deadlock.jsonl"));
  testing::TempDir dir;
  const std::filesystem::path out = dir / "fr";
  const FrExportSummary first = write_flight_recorder_dumps(out, trace, FrDumpForm::pickle);
  EXPECT_EQ(first.dumps, 2u);
  EXPECT_EQ(first.entries, 2u);
  EXPECT_TRUE(std::filesystem::exists(out / "nccl_trace_rank_0"));
  EXPECT_EQ(write_flight_recorder_dumps(out, trace, FrDumpForm::pickle).dumps, 2u);  // again
  EXPECT_THROW_MSG(write_flight_recorder_dumps(out, trace, FrDumpForm::json), TraceError,
                   "holds nccl_trace_rank_0, not a JSON dump");
  std::ofstream(out / "nccl_trace_rank_7") << "a real job's dump";
  EXPECT_THROW_MSG(write_flight_recorder_dumps(out, trace, FrDumpForm::pickle), TraceError,
                   "holds nccl_trace_rank_7");
  std::filesystem::remove(out / "nccl_trace_rank_7");
  std::ofstream(out / "nccl_trace_rank_1", std::ios::trunc) << "someone else's";
  EXPECT_THROW_MSG(write_flight_recorder_dumps(out, trace, FrDumpForm::pickle), TraceError,
                   "give an empty or new folder");
  std::ifstream kept(out / "nccl_trace_rank_1");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(kept), {}), "someone else's");
  std::ofstream(out / "notes.txt") << "not read";  // other names are left alone
  std::filesystem::remove(out / "nccl_trace_rank_1");
  EXPECT_EQ(write_flight_recorder_dumps(out, trace, FrDumpForm::pickle).dumps, 2u);
}

}  // namespace
}  // namespace ranklab
