// The Flight Recorder importer on dumps built here (JSON, as dump_json writes them) and on
// the shipped examples (both forms): groups, operations, counts, call sites, pending
// entries and what is left out after them, ring-buffer windows, coalesced groups; and the
// one-line errors for malformed dumps ("FILE: entry N: reason").
#include "traces/flight_recorder.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support/expect_throw_msg.hpp"
#include "tests/support/temp_dir.hpp"
#include "traces/error.hpp"
#include "traces/event_text.hpp"
#include "traces/jsonl.hpp"

namespace ranklab {
namespace {

using nlohmann::json;

std::filesystem::path examples() {
  return std::filesystem::path(RANKLAB_SOURCE_DIR) / "traces" / "examples" / "fr";
}

/// One entry as FlightRecorder::dump_json writes it (no frames unless given).
struct E {
  std::string name = "nccl:all_reduce";
  std::vector<std::uint64_t> shape = {8};
  std::string state = "completed";
  std::uint64_t coll = 1;
  std::uint64_t p2p = 0;
  std::string pg = "0";
  std::string dtype = "Float";
  json frames = nullptr;
};

json entry(const E& e, std::size_t id) {
  json j = {{"record_id", id},
            {"pg_id", std::stoi(e.pg)},
            {"process_group", {e.pg, e.pg == "0" ? "default_pg" : "undefined"}},
            {"collective_seq_id", e.coll},
            {"p2p_seq_id", e.p2p},
            {"op_id", id + 1},
            {"profiling_name", e.name},
            {"time_created_ns", 1000 + id},
            {"input_sizes", {e.shape}},
            {"input_dtypes", {e.dtype}},
            {"output_sizes", {e.shape}},
            {"output_dtypes", {e.dtype}},
            {"state", e.state},
            {"retired", e.state == "completed"},
            {"timeout_ms", 600000},
            {"is_p2p", e.name.find(" ") != std::string::npos}};
  if (!e.frames.is_null()) j["frames"] = e.frames;
  return j;
}

json dump(const std::vector<E>& entries, json pg_config = nullptr) {
  if (pg_config.is_null()) {
    pg_config = {{"0", {{"name", "0"}, {"desc", "default_pg"}, {"ranks", "[0, 1, 2, 3]"}}}};
  }
  json list = json::array();
  for (std::size_t i = 0; i < entries.size(); ++i) list.push_back(entry(entries[i], i));
  return {{"version", "2.4"}, {"pg_config", pg_config}, {"pg_status", json::object()},
          {"entries", list}};
}

Trace import(const std::vector<json>& dumps) {
  std::vector<FrDumpFile> files;
  for (std::size_t r = 0; r < dumps.size(); ++r) {
    files.push_back({"nccl_trace_rank_" + std::to_string(r) + ".json", dumps[r].dump()});
  }
  return import_flight_recorder(files);
}

//! Collectives and point-to-point entries become the trace's operations: world and groups
//! from pg_config, counts by FORMAT.md's per-rank unit, dtypes, peers by group rank.
TEST(FrImportTest, EntriesBecomeOperations) {
  const json config = {{"0", {{"name", "0"}, {"desc", "default_pg"}, {"ranks", "[0, 1]"}}},
                       {"1", {{"name", "1"}, {"desc", "tp"}, {"ranks", json::array({0, 1})}}}};
  const std::vector<E> r0 = {{.name = "nccl:all_reduce", .shape = {2, 3}},
                             {.name = "nccl:reduce_scatter_tensor", .shape = {4}, .coll = 2},
                             {.name = "gloo:broadcast", .shape = {5}, .coll = 1, .pg = "1",
                              .dtype = "Double"},
                             {.name = "nccl:send 0->1", .shape = {7}, .coll = 2, .p2p = 1}};
  std::vector<E> r1 = r0;
  r1[3].name = "nccl:recv 1<-0";
  const Trace trace = import({dump(r0, config), dump(r1, config)});
  ASSERT_EQ(trace.header.world_size, 2);
  ASSERT_EQ(trace.header.groups.size(), 2u);
  EXPECT_EQ(trace.header.groups[1].name, "pg1:tp");
  EXPECT_EQ(trace.header.version, "1.2");
  const auto& ops = trace.ranks[0];
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ops[0].op, OpKind::all_reduce);
  EXPECT_EQ(ops[0].count, 6u);
  EXPECT_EQ(ops[1].op, OpKind::reduce_scatter);
  EXPECT_EQ(ops[1].count, 4u);  // the output: what each rank gets
  EXPECT_EQ(ops[2].op, OpKind::broadcast);
  EXPECT_EQ(ops[2].group, 1u);
  EXPECT_EQ(ops[2].dtype, DataType::f64);
  EXPECT_EQ(ops[2].root, 0);
  EXPECT_EQ(ops[3].op, OpKind::send);
  EXPECT_EQ(ops[3].peer, 1);
  EXPECT_EQ(trace.ranks[1][3].op, OpKind::recv);
  EXPECT_EQ(trace.ranks[1][3].msg.sender, 0);
  EXPECT_EQ(trace.ranks[1][3].msg.sender_seq, 3u);
}

//! Half and BFloat16 tensors are ranklab's f16 and bf16, element for element (they were
//! carried as twice as many bytes), and the trace says format 1.4, which has them.
TEST(FrImportTest, SixteenBitFloatsKeepTheirType) {
  const std::vector<E> entries = {{.shape = {6}, .dtype = "BFloat16"},
                                  {.shape = {5}, .coll = 2, .dtype = "Half"}};
  const Trace trace = import({dump(entries), dump(entries)});
  ASSERT_EQ(trace.ranks[1].size(), 2u);
  EXPECT_EQ(trace.ranks[1][0].dtype, DataType::bf16);
  EXPECT_EQ(trace.ranks[1][0].count, 6u);
  EXPECT_EQ(trace.ranks[1][1].dtype, DataType::f16);
  EXPECT_EQ(trace.ranks[1][1].count, 5u);
  EXPECT_EQ(trace.header.version, "1.4");
}

//! A barrier as ProcessGroupNCCL records it (an all_reduce of one Float named
//! "nccl:all_reduce_barrier") is a barrier; it used to be refused as unsupported.
TEST(FrImportTest, BarrierAsTorchRecordsIt) {
  const std::vector<E> entries = {{.name = "nccl:all_reduce_barrier", .shape = {1}},
                                  {.name = "nccl:all_reduce", .coll = 2}};
  const Trace trace = import({dump(entries), dump(entries), dump(entries), dump(entries)});
  ASSERT_EQ(trace.ranks[2].size(), 2u);
  EXPECT_EQ(trace.ranks[2][0].op, OpKind::barrier);
  EXPECT_EQ(trace.ranks[2][0].count, 0u);
  EXPECT_EQ(trace.ranks[2][1].op, OpKind::all_reduce);
}

//! The entries' host-clock times become the operations' times (ns after the earliest entry:
//! created -> vt_post_ns, discovered completed -> vt_end_ns; a pending one has no end), and
//! version 2.10's thread names are kept in the header's config.
TEST(FrImportTest, TimestampsAndThreads) {
  std::vector<json> dumps;
  for (int r = 0; r < 2; ++r) {
    json d = dump({{.name = "nccl:all_reduce"}, {.name = "nccl:all_reduce", .state = "started", .coll = 2}},
                  {{"0", {{"name", "0"}, {"desc", "default_pg"}, {"ranks", "[0, 1]"}}}});
    d["version"] = "2.10";
    json& e = d["entries"];
    const std::int64_t base = 1'700'000'000'000'000'000 + r * 4'200'000'000;  // rank 1: 4.2 s later
    e[0]["time_created_ns"] = base;
    e[0]["time_discovered_started_ns"] = base + 10;
    e[0]["time_discovered_completed_ns"] = base + 5'000;
    e[1]["time_created_ns"] = base + 1'000'000;
    e[1]["time_discovered_started_ns"] = base + 1'000'010;
    e[1]["time_discovered_completed_ns"] = 0;  // dump_json's "never"
    e[0]["thread_name"] = e[1]["thread_name"] = "pt_main_thread";
    e[0]["thread_id"] = e[1]["thread_id"] = "1402";
    dumps.push_back(d);
  }
  const Trace trace = import(dumps);
  EXPECT_EQ(trace.ranks[0][0].vt_post_ns, 0);
  EXPECT_EQ(trace.ranks[0][0].vt_end_ns, 5'000);
  EXPECT_EQ(trace.ranks[0][1].vt_post_ns, 1'000'000);
  EXPECT_EQ(trace.ranks[0][1].vt_end_ns, kNoTime);
  EXPECT_EQ(trace.ranks[1][0].vt_post_ns, 4'200'000'000);
  EXPECT_EQ(trace.header.config.at("time").at("origin_ns"), 1'700'000'000'000'000'000);
  EXPECT_EQ(trace.header.config.at("threads").at("1"), json::array({"pt_main_thread (1402)"}));
  // One entry without a time: no operation gets one (the axis stays logical).
  dumps[1]["entries"][0].erase("time_created_ns");
  const Trace untimed = import(dumps);
  EXPECT_EQ(untimed.ranks[0][0].vt_post_ns, kNoTime);
  EXPECT_TRUE(untimed.header.config.at("time").is_null());
}

//! The call site is the innermost frame outside torch's own files; it survives the JSONL
//! round trip (format 1.2).
TEST(FrImportTest, CallSiteIsTheInnermostUserFrame) {
  const json frames = json::array(
      {{{"name", "all_reduce"}, {"filename", "/x/torch/distributed/distributed_c10d.py"}, {"line", 2501}},
       {{"name", "step"}, {"filename", "/home/u/train.py"}, {"line", 42}},
       {{"name", "main"}, {"filename", "/home/u/train.py"}, {"line", 90}}});
  std::vector<json> dumps;
  for (int r = 0; r < 4; ++r) dumps.push_back(dump({{.frames = frames}}));
  const Trace trace = import(dumps);
  const CallSite& site = trace.ranks[2][0].site;
  EXPECT_EQ(site.file, "/home/u/train.py");
  EXPECT_EQ(site.line, 42u);
  EXPECT_EQ(site.function, "step");
  std::ostringstream out;
  write_trace(out, trace);
  EXPECT_NE(out.str().find(R"("site":{"file":"/home/u/train.py","function":"step","line":42})"),
            std::string::npos)
      << out.str();
  std::istringstream in(out.str());
  EXPECT_EQ(read_trace(in, "again"), trace);
}

//! An entry not completed is pending and blocked; the rank's later entries on that group
//! never ran and are left out, while another group's entries go on with it still open.
TEST(FrImportTest, PendingEntriesAndWhatFollowsThem) {
  const json config = {{"0", {{"name", "0"}, {"desc", "default_pg"}, {"ranks", "[0, 1]"}}},
                       {"1", {{"name", "1"}, {"desc", "undefined"}, {"ranks", "[0, 1]"}}}};
  const std::vector<E> stuck = {{.coll = 1},
                                {.state = "started", .coll = 2},
                                {.state = "scheduled", .coll = 3},
                                {.coll = 1, .pg = "1"}};
  const Trace trace = import({dump(stuck, config), dump(stuck, config)});
  const auto& ops = trace.ranks[0];
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[1].status, OpStatus::pending);
  EXPECT_TRUE(ops[1].blocked);
  EXPECT_EQ(ops[2].group, 1u);
  EXPECT_EQ(ops[2].status, OpStatus::completed);
  EXPECT_EQ(ops[2].in_flight, std::vector<std::uint64_t>{1});
  EXPECT_EQ(trace.header.groups[1].name, "pg1");
  EXPECT_EQ(trace.header.config["left_out"]["after_pending"], 2);  // one per rank
}

//! Ring buffers that wrapped: collectives older than the first every rank still has, and
//! completed messages whose partner is gone, are left out; the rest lines up.
TEST(FrImportTest, RingBufferWindowsAreAligned) {
  const json config = {{"0", {{"name", "0"}, {"desc", "default_pg"}, {"ranks", "[0, 1]"}}}};
  // Rank 0 still holds collectives 5..7 and an old receive; rank 1 only 6..7.
  const Trace trace = import({dump({{.name = "nccl:recv 0<-1", .coll = 4, .p2p = 9},
                                    {.coll = 5}, {.coll = 6}, {.coll = 7}}, config),
                              dump({{.coll = 6}, {.coll = 7}}, config)});
  ASSERT_EQ(trace.ranks[0].size(), 2u);
  EXPECT_EQ(trace.ranks[0][0].coll_seq, 0);
  EXPECT_EQ(trace.header.config["left_out"]["before_window"], 1);
  EXPECT_EQ(trace.header.config["left_out"]["unmatched_completed"], 1);
}

//! A coalesced group (one seq id, closed by BACKEND:coalesced) is posted at once: each
//! member is in flight while the others are posted.
TEST(FrImportTest, CoalescedGroupsArePostedTogether) {
  const json config = {{"0", {{"name", "0"}, {"desc", "default_pg"}, {"ranks", "[0, 1]"}}}};
  const auto batch = [](int me) {
    const int peer = 1 - me;
    return std::vector<E>{
        {.name = fmt::format("nccl:send {}->{}", me, peer), .coll = 0, .p2p = 1},
        {.name = fmt::format("nccl:recv {}<-{}", me, peer), .coll = 0, .p2p = 1},
        {.name = "nccl:coalesced", .shape = {}, .coll = 0, .p2p = 1},
        {.coll = 1}};
  };
  const Trace trace = import({dump(batch(0), config), dump(batch(1), config)});
  const auto& ops = trace.ranks[0];
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[1].in_flight, std::vector<std::uint64_t>{0});
  EXPECT_TRUE(ops[2].in_flight.empty());  // both waited for at the group's end
}

//! Both forms of every shipped example import to the same operations; only the pickle
//! form carries call sites (dump_json writes no frames).
TEST(FrImportTest, ShippedExamplesAgreeAcrossForms) {
  for (const char* name : {"missing_rank", "size_mismatch", "send_recv_cycle", "healthy", "late_rank"}) {
    Trace pickle = read_flight_recorder({examples() / name});
    const Trace from_json = read_flight_recorder({examples() / name / "json"});
    ASSERT_EQ(pickle.header.world_size, 4) << name;
    bool sites = false;
    for (auto& events : pickle.ranks) {
      for (TraceEvent& e : events) {
        sites = sites || !e.site.empty();
        e.site = {};
      }
    }
    EXPECT_TRUE(sites) << name;
    EXPECT_EQ(pickle, from_json) << name;
  }
}

//! The missing participant: rank 3's dump lacks the all_reduce the others are stuck in.
TEST(FrImportTest, MissingRankExample) {
  const Trace trace = read_flight_recorder({examples() / "missing_rank"});
  ASSERT_EQ(trace.ranks[0].size(), 3u);
  ASSERT_EQ(trace.ranks[3].size(), 2u);
  EXPECT_EQ(trace.ranks[0][2].status, OpStatus::pending);
  EXPECT_EQ(trace.ranks[0][2].site->function, "sync_loss");
}

//! In a folder, the files named for their rank are the dumps; a README beside them is not
//! read, and a folder with none is an error that says what a dump's name looks like.
TEST(FrImportTest, FolderReadsFilesNamedForTheirRank) {
  testing::TempDir dir("ranklab_fr_folder");
  std::ofstream(dir / "README.md") << "dumps of the job that hung on Tuesday\n";
  EXPECT_THROW_MSG((void)read_flight_recorder({dir.path()}), TraceError,
                   "a folder without dumps (files named for their rank, as nccl_trace_rank_3)");
  const json config = {{"0", {{"name", "0"}, {"desc", "default_pg"}, {"ranks", "[0, 1]"}}}};
  for (int r = 0; r < 2; ++r) {
    std::ofstream(dir / ("rank_" + std::to_string(r) + ".json")) << dump({{}}, config).dump();
  }
  const Trace trace = read_flight_recorder({dir.path()});
  EXPECT_EQ(trace.header.world_size, 2);
  EXPECT_EQ(trace.header.config["dumps"], 2);
}

// ---- malformed dumps --------------------------------------------------------------------

void expect_import_error(const std::vector<json>& dumps, const std::string& message) {
  EXPECT_THROW_MSG((void)import(dumps), TraceError, message);
}

std::vector<json> world_of(const std::vector<E>& entries) {
  return {dump(entries), dump(entries), dump(entries), dump(entries)};
}

//! A version of another major is refused by name.
TEST(FrImportErrorTest, WrongVersion) {
  std::vector<json> dumps = world_of({{}});
  dumps[1]["version"] = "3.0";
  expect_import_error(dumps, "nccl_trace_rank_1.json: unsupported Flight Recorder version '3.0' "
                             "(this reader supports 2.x)");
  dumps[1].erase("version");
  expect_import_error(dumps, "nccl_trace_rank_1.json: missing required field 'version'");
}

//! An operation ranklab does not replay is refused with its entry.
TEST(FrImportErrorTest, UnknownProfilingName) {
  std::vector<json> dumps = world_of({{}, {.name = "nccl:all_reduce_sparse", .coll = 2}});
  expect_import_error(dumps, "nccl_trace_rank_0.json: entry 1: unsupported operation "
                             "'nccl:all_reduce_sparse'");
  dumps = world_of({{.name = "all_reduce"}});
  expect_import_error(dumps, "entry 0: profiling name 'all_reduce' is not BACKEND:OP");
  dumps = world_of({{.name = "gloo:send"}});
  expect_import_error(dumps, "entry 0: profiling name 'gloo:send' does not name its peer");
}

//! The optional fields, when present, have their types: timestamps non-negative integers
//! (or None), thread_id and thread_name text; else one line naming the file and entry.
TEST(FrImportErrorTest, TimestampsAndThreads) {
  std::vector<json> dumps = world_of({{}, {.coll = 2}});
  dumps[1]["entries"][1]["time_created_ns"] = -5;
  expect_import_error(dumps, "nccl_trace_rank_1.json: entry 1: field 'time_created_ns' must be");
  dumps = world_of({{}});
  dumps[2]["entries"][0]["time_discovered_completed_ns"] = "soon";
  expect_import_error(dumps, "nccl_trace_rank_2.json: entry 0: field 'time_discovered_completed_ns' must be");
  dumps = world_of({{}});
  dumps[0]["entries"][0]["thread_id"] = 140230000000000;
  expect_import_error(dumps, "nccl_trace_rank_0.json: entry 0: field 'thread_id' must be a string");
  dumps = world_of({{}});
  dumps[0]["entries"][0]["time_discovered_started_ns"] = nullptr;  // None: never taken
  dumps[0]["entries"][0]["thread_name"] = nullptr;
  EXPECT_NO_THROW(import(dumps));
}

//! Missing or mistyped fields name the entry and the field.
TEST(FrImportErrorTest, MissingField) {
  std::vector<json> dumps = world_of({{}, {.coll = 2}});
  dumps[2]["entries"][1].erase("state");
  expect_import_error(dumps, "nccl_trace_rank_2.json: entry 1: missing required field 'state'");
  dumps = world_of({{}});
  dumps[0]["entries"][0]["input_sizes"] = "8";
  expect_import_error(dumps, "nccl_trace_rank_0.json: entry 0: field 'input_sizes' must be");
  dumps = world_of({{.dtype = "Quaternion"}});
  expect_import_error(dumps, "entry 0: unknown dtype 'Quaternion' in input_dtypes");
  dumps = world_of({{.state = "running"}});
  expect_import_error(dumps, "entry 0: unknown state 'running'");
  dumps = world_of({{}});
  dumps[3].erase("pg_config");
  expect_import_error(dumps, "nccl_trace_rank_3.json: missing required field 'pg_config'");
}

//! Dumps that contradict themselves or each other.
TEST(FrImportErrorTest, InconsistentDumps) {
  std::vector<json> dumps = world_of({{.pg = "5"}});
  expect_import_error(dumps, "entry 0: process group '5' is not in pg_config");
  dumps = world_of({{.name = "nccl:send 2->1", .coll = 1, .p2p = 1}});
  expect_import_error(dumps, "nccl_trace_rank_0.json: entry 0: 'nccl:send 2->1' is issued by "
                             "group rank 2, but rank 0 is group rank 0 of '0'");
  dumps = world_of({{}});
  dumps[1]["pg_config"]["0"]["ranks"] = "[0, 1, 2]";
  expect_import_error(dumps, "pg_config '0' has ranks [0, 1, 2], but nccl_trace_rank_0.json "
                             "gives [0, 1, 2, 3]");
  std::vector<FrDumpFile> twice = {{"a_1.json", dump({{}}).dump()}, {"b_1.json", dump({{}}).dump()}};
  EXPECT_THROW_MSG((void)import_flight_recorder(twice), TraceError,
                   "b_1.json: a second dump of rank 1 (the first is a_1.json)");
}

//! Files that are not dumps at all, and truncated or refused pickles, name the file.
TEST(FrImportErrorTest, NotADump) {
  EXPECT_THROW_MSG((void)import_flight_recorder({{"notes_0.txt", "hello"}}), TraceError,
                   "notes_0.txt: not a Flight Recorder dump");
  EXPECT_THROW_MSG((void)import_flight_recorder({{"d_0.json", "{\"version\": \"2.4\""}}),
                   TraceError, "d_0.json: offset ");
  EXPECT_THROW_MSG((void)import_flight_recorder({{"dump", dump({{}}).dump()}}), TraceError,
                   "dump: no rank");
  // Found by fr_importer_fuzzer: a number nlohmann cannot hold escaped as out_of_range.
  EXPECT_THROW_MSG((void)import_flight_recorder({{"big_0.json", R"({"version":"2.4","t":1e4000})"}}),
                   TraceError, "big_0.json: invalid JSON: ");
  json ranks = dump({{}});
  ranks["pg_config"]["0"]["ranks"] = "[1e4000]";
  EXPECT_THROW_MSG((void)import({ranks}), TraceError,
                   "nccl_trace_rank_0.json: pg_config '0': ranks \"[1e4000]\" is not a list");
  // Issue 28 §4: a ranks string of 100,000 nested brackets, balanced or not, was parsed
  // again outside the document's depth check and crashed (SIGSEGV) reading or showing it.
  for (const std::string& deep : {std::string(100000, '['),
                                  std::string(100000, '[') + std::string(100000, ']')}) {
    ranks["pg_config"]["0"]["ranks"] = deep;
    EXPECT_THROW_MSG((void)import({ranks}), TraceError,
                     "nccl_trace_rank_0.json: pg_config '0': ranks \"[[[[");
    EXPECT_THROW_MSG((void)import({ranks}), TraceError, ": offset 64: nested deeper than 64");
  }
  std::ifstream in(examples() / "healthy" / "nccl_trace_rank_0", std::ios::binary);
  std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  ASSERT_GT(bytes.size(), 100u);
  EXPECT_THROW_MSG((void)import_flight_recorder({{"cut_0", bytes.substr(0, bytes.size() / 2)}}),
                   TraceError, "cut_0: offset ");
  std::string evil = bytes;
  evil[evil.size() - 1] = 'b';  // BUILD where STOP was
  EXPECT_THROW_MSG((void)import_flight_recorder({{"evil_0", evil}}), TraceError,
                   "unsupported pickle opcode 0x62");
}

//! Issue 28 §4: errors echoed a value whole (5-8 MB on one line); every value an error
//! shows is cut to its first bytes and its size, whichever field holds it.
TEST(FrImportErrorTest, LongValuesAreCutInErrors) {
  const std::string huge(6'000'000, 'x');
  const std::vector<std::pair<std::string, void (*)(json&, const std::string&)>> cases = {
      {"unsupported Flight Recorder version 'xxx",
       [](json& d, const std::string& v) { d["version"] = v; }},
      {"entry 0: unsupported operation 'nccl:xxx",
       [](json& d, const std::string& v) { d["entries"][0]["profiling_name"] = "nccl:" + v; }},
      {"entry 0: profiling name 'xxx",
       [](json& d, const std::string& v) { d["entries"][0]["profiling_name"] = v; }},
      {"entry 0: profiling name 'nccl:send xxx",
       [](json& d, const std::string& v) { d["entries"][0]["profiling_name"] = "nccl:send " + v; }},
      {"entry 0: unknown state 'xxx",
       [](json& d, const std::string& v) { d["entries"][0]["state"] = v; }},
      {"entry 0: unknown dtype 'xxx",
       [](json& d, const std::string& v) { d["entries"][0]["input_dtypes"] = {v}; }},
      {"entry 0: process group 'xxx",
       [](json& d, const std::string& v) { d["entries"][0]["process_group"] = {v, "x"}; }},
      {"pg_config 'xxx",
       [](json& d, const std::string& v) { d["pg_config"][v] = {{"ranks", "[0, 1, 2, 5]"}}; }},
  };
  for (const auto& [message, edit] : cases) {
    std::vector<json> dumps = world_of({{}});
    edit(dumps[1], huge);
    try {
      (void)import(dumps);
      ADD_FAILURE() << message << ": imported";
    } catch (const TraceError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(message), std::string::npos) << what.substr(0, 300);
      EXPECT_NE(what.find("... ("), std::string::npos) << what.substr(0, 300);
      EXPECT_LT(what.size(), 400u) << what.substr(0, 300);
    }
  }
}

//! Issue 28 §4: a dump whose `entries` key was damaged read as a rank that recorded
//! nothing, silently. A key named like it or holding entries is refused with the file; a
//! dump without entries (torch then leaves the key out) still reads as one.
TEST(FrImportErrorTest, DamagedEntriesKeyIsRefused) {
  for (const std::string key : {"entires", "Entries", "entries ", "entry", "records"}) {
    std::vector<json> dumps = world_of({{}});
    dumps[2][key] = dumps[2]["entries"];
    dumps[2].erase("entries");
    expect_import_error(dumps, "nccl_trace_rank_2.json: no field 'entries', but a field '" +
                                   key + "' stands in its place");
  }
  std::vector<json> dumps = world_of({{}});
  dumps[2].erase("entries");
  dumps[2]["nccl_comm_state"] = json::object();
  const Trace trace = import(dumps);
  EXPECT_TRUE(trace.ranks[2].empty());
}

//! Each imported operation names its dump and entry (what a replay's refusal of it says).
TEST(FrImportTest, OperationsNameTheirDumpAndEntry) {
  const Trace trace = import(world_of({{}, {.coll = 2}}));
  ASSERT_EQ(trace.ranks[1].size(), 2u);
  EXPECT_EQ(source_of(trace, trace.ranks[1][0]), "nccl_trace_rank_1.json: entry 0");
  EXPECT_EQ(source_of(trace, trace.ranks[3][1]), "nccl_trace_rank_3.json: entry 1");
}

}  // namespace
}  // namespace ranklab
