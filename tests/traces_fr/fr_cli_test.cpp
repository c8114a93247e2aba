// `ranklab replay|stats|diff|export|explore --format pytorch-fr` end to end on the shipped
// Flight Recorder examples: each case's exit code and report lines as its expected.txt
// says, for the pickle and the JSON form; the same input for the other tools; and one-line
// errors for bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/support/temp_dir.hpp"
#include "tests/traces_tools/run_command.hpp"

namespace ranklab {
namespace {

using tools_testing::CommandResult;
using tools_testing::shell_quoted;
using tools_testing::without_timing;

std::filesystem::path examples() {
  return std::filesystem::path(RANKLAB_SOURCE_DIR) / "traces" / "examples" / "fr";
}

CommandResult ranklab(const std::string& args) { return tools_testing::run_ranklab(args); }

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

struct Expected {
  int exit_code = -1;
  std::vector<std::string> both;
  std::vector<std::string> pickle_only;
};

Expected read_expected(const std::filesystem::path& path) {
  std::ifstream in(path);
  Expected out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("exit ")) out.exit_code = std::stoi(line.substr(5));
    if (line.starts_with("both: ")) out.both.push_back(line.substr(6));
    if (line.starts_with("pickle: ")) out.pickle_only.push_back(line.substr(8));
  }
  return out;
}

class FrExampleTest : public ::testing::TestWithParam<const char*> {};

//! Replayed, each example gives its expected report: the missing participant, the size
//! mismatch, the send/recv cycle (with the Python call sites from the pickle dumps), and a
//! clean replay of the healthy job.
TEST_P(FrExampleTest, ReplaysIntoItsExpectedReport) {
  const std::filesystem::path dir = examples() / GetParam();
  const Expected expected = read_expected(dir / "expected.txt");
  ASSERT_GE(expected.exit_code, 0) << "no exit line in " << dir / "expected.txt";
  for (const char* form : {"pickle", "json"}) {
    // The pickle dumps lie in the case's folder (beside expected.txt, which is not read).
    const std::filesystem::path input = std::string(form) == "pickle" ? dir : dir / form;
    const CommandResult run = ranklab("replay --format pytorch-fr " + shell_quoted(input));
    EXPECT_EQ(run.exit_code, expected.exit_code) << form << "\n" << run.out << run.err;
    for (const std::string& line : expected.both) {
      EXPECT_TRUE(has(run.out, line + "\n")) << form << ": expected\n" << line << "\nin\n" << run.out;
    }
    const bool pickle = std::string(form) == "pickle";
    for (const std::string& line : expected.pickle_only) {
      EXPECT_EQ(has(run.out, line + "\n"), pickle) << form << ": " << line << "\nin\n" << run.out;
    }
    EXPECT_EQ(has(run.out, "call sites (from the recording)"), pickle && expected.exit_code != 0)
        << run.out;
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, FrExampleTest,
                         ::testing::Values("missing_rank", "size_mismatch", "send_recv_cycle",
                                           "healthy", "late_rank"));

//! The dumps may be given as files, one per rank, as well as by folder.
TEST(FrCliTest, DumpFilesOneByOne) {
  const std::filesystem::path dir = examples() / "send_recv_cycle";
  std::string args;
  for (int r = 0; r < 4; ++r) args += " " + shell_quoted(dir / ("nccl_trace_rank_" + std::to_string(r)));
  const CommandResult run = ranklab("replay --format pytorch-fr" + args);
  EXPECT_EQ(run.exit_code, 3) << run.out << run.err;
  EXPECT_TRUE(has(run.out, "cycle 0 -> 1 -> 0")) << run.out;
  EXPECT_TRUE(has(run.out, "(+3 more)")) << run.out;
}

//! A rank whose dump is missing (its process died) replays with no operations: the rank
//! the others wait for, said on stderr too.
TEST(FrCliTest, RankWithoutADump) {
  const std::filesystem::path dir = examples() / "healthy" / "json";
  std::string args;
  for (int r = 0; r < 3; ++r) {
    args += " " + shell_quoted(dir / ("nccl_trace_rank_" + std::to_string(r) + ".json"));
  }
  const CommandResult run = ranklab("replay --format pytorch-fr" + args);
  EXPECT_EQ(run.exit_code, 3) << run.out << run.err;
  EXPECT_TRUE(has(run.out, "rank 3 never joined broadcast #0 of world (it finished)")) << run.out;
  EXPECT_TRUE(has(run.err, "rank 3 of the world has no dump: it replays")) << run.err;
}

//! stats, diff, export and explore take the same input as replay.
TEST(FrCliTest, OtherToolsTakeTheSameInput) {
  const std::string healthy = shell_quoted(examples() / "healthy");
  const CommandResult stats = ranklab("stats --format pytorch-fr " + healthy);
  EXPECT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_TRUE(has(stats.out, "world 4, 36 operations (36 completed, 0 pending)")) << stats.out;
  EXPECT_TRUE(has(stats.out, "pg1:tp")) << stats.out;

  // The two forms of one job differ in nothing diff compares (sites are not behaviour).
  const CommandResult same = ranklab("diff --format pytorch-fr " + healthy + " " +
                                     shell_quoted(examples() / "healthy" / "json"));
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;
  const CommandResult differ = ranklab("diff --format pytorch-fr " + healthy + " " +
                                       shell_quoted(examples() / "size_mismatch" / "json"));
  EXPECT_EQ(differ.exit_code, 2) << differ.out << differ.err;

  testing::TempDir dir("ranklab_fr_cli");
  const CommandResult exported = ranklab("export --format pytorch-fr " + healthy + " --perfetto " +
                                         shell_quoted(dir / "t.json"));
  EXPECT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_TRUE(std::filesystem::file_size(dir / "t.json") > 100);

  const CommandResult explored =
      ranklab("explore " + shell_quoted(examples() / "missing_rank" / "json") +
              " --format pytorch-fr --runs 4 --jobs 1");
  EXPECT_EQ(explored.exit_code, 3) << explored.out << explored.err;
}

/// A replay report without what names the input or measures the replay, what only a Flight
/// Recorder import adds ("from the recording") and payload hashes (not in the format): the
/// part two inputs of one job share.
std::string report_body(const std::string& out) {
  static const std::regex hash(" hash [0-9a-f]{16}");
  std::istringstream in(out);
  std::string body;
  std::string line;
  bool notes = false;
  while (std::getline(in, line)) {
    if (line.starts_with("from the recording (Flight Recorder):")) notes = true;
    else if (notes && !line.starts_with("  ")) notes = false;
    if (notes || line.starts_with("replay of ") || line.starts_with("time: ") ||
        line.starts_with("recorded hashes: ")) {
      continue;
    }
    body += std::regex_replace(line, hash, "") + "\n";
  }
  while (body.ends_with("\n\n")) body.pop_back();
  return body;
}

/// The lines of a report's section (after its title, up to the next blank line).
std::string section(const std::string& out, const std::string& title) {
  const std::size_t at = out.find("\n" + title + "\n");
  if (at == std::string::npos) return "";
  const std::size_t from = at + title.size() + 2;
  return out.substr(from, out.find("\n\n", from) - from);
}

class FrExportReportTest : public ::testing::TestWithParam<std::tuple<const char*, const char*>> {};

//! A trace exported as Flight Recorder dumps and replayed from them gives the report, exit
//! code included, that the trace itself gives (from JSON dumps, which have no frames, the same
//! culprits and cycles).
TEST_P(FrExportReportTest, ReplayOfTheExportGivesTheSameReport) {
  const auto [trace, flag] = GetParam();
  const std::string input = shell_quoted(std::filesystem::path(RANKLAB_SOURCE_DIR) / "traces" / "examples" / trace);
  testing::TempDir dir("ranklab_fr_export");
  const CommandResult exported = ranklab("export " + input + " " + flag + " " + shell_quoted(dir / "fr"));
  ASSERT_EQ(exported.exit_code, 0) << exported.out << exported.err;
  EXPECT_TRUE(has(exported.out, "dumps, ")) << exported.out;
  const CommandResult direct = ranklab("replay " + input);
  const CommandResult back = ranklab("replay --format pytorch-fr " + shell_quoted(dir / "fr"));
  EXPECT_EQ(back.exit_code, direct.exit_code) << back.out << back.err;
  if (std::string(flag) == "--flight-recorder") {
    EXPECT_EQ(report_body(back.out), report_body(direct.out));
  } else {  // JSON dumps have no frames: the same findings, without call sites
    EXPECT_EQ(section(back.out, "culprits:"), section(direct.out, "culprits:"));
    EXPECT_EQ(section(back.out, "wait-for cycles:"), section(direct.out, "wait-for cycles:"));
  }
  EXPECT_TRUE(has(back.out, "from the recording (Flight Recorder):\n")) << back.out;
}

INSTANTIATE_TEST_SUITE_P(
    Examples, FrExportReportTest,
    ::testing::Combine(::testing::Values("missing_barrier_deadlock.jsonl", "send_send_deadlock.jsonl",
                                         "seed_step_w8.jsonl", "allreduce_w8.jsonl"),
                       ::testing::Values("--flight-recorder", "--flight-recorder-json")));

//! An imported job exported again replays into its own report (groups keep their names).
TEST(FrCliTest, ImportExportedAgainKeepsItsReport) {
  for (const char* example : {"missing_rank", "size_mismatch", "send_recv_cycle", "healthy"}) {
    const std::string input = shell_quoted(examples() / example);
    testing::TempDir dir("ranklab_fr_again");
    const CommandResult exported =
        ranklab("export --format pytorch-fr " + input + " --flight-recorder " + shell_quoted(dir / "fr"));
    ASSERT_EQ(exported.exit_code, 0) << exported.err;
    const CommandResult first = ranklab("replay --format pytorch-fr " + input);
    const CommandResult again = ranklab("replay --format pytorch-fr " + shell_quoted(dir / "fr"));
    EXPECT_EQ(again.exit_code, first.exit_code) << example << again.out;
    EXPECT_EQ(report_body(again.out), report_body(first.out)) << example;
  }
}

//! Export's refusals are one line, exit 1: no output asked for, both forms into one folder,
//! a folder holding a file the analyzer would read beside the export.
TEST(FrCliTest, ExportRefusals) {
  const std::string input = shell_quoted(std::filesystem::path(RANKLAB_SOURCE_DIR) / "traces" /
                                         "examples" / "send_send_deadlock.jsonl");
  testing::TempDir dir("ranklab_fr_refuse");
  const CommandResult none = ranklab("export " + input);
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_TRUE(has(none.err, "--flight-recorder DIR")) << none.err;
  const std::string out = shell_quoted(dir / "fr");
  const CommandResult both = ranklab("export " + input + " --flight-recorder " + out +
                                     " --flight-recorder-json " + out);
  EXPECT_EQ(both.exit_code, 1);
  EXPECT_TRUE(has(both.err, "need two folders")) << both.err;
  std::filesystem::create_directories(dir / "fr");
  std::ofstream(dir / "fr" / "nccl_trace_rank_0") << "a real job's dump";
  const CommandResult foreign = ranklab("export " + input + " --flight-recorder " + out);
  EXPECT_EQ(foreign.exit_code, 1);
  EXPECT_TRUE(has(foreign.err, "holds nccl_trace_rank_0, not a pickle dump")) << foreign.err;
  EXPECT_EQ(std::count(foreign.err.begin(), foreign.err.end(), '\n'), 1) << foreign.err;
}

/// The size_mismatch example's JSON dumps with rank 3's stuck entry changed by `edit`.
void write_variant(const std::filesystem::path& to, void (*edit)(nlohmann::json&)) {
  const std::filesystem::path from = examples() / "size_mismatch" / "json";
  for (int r = 0; r < 4; ++r) {
    const std::string name = "nccl_trace_rank_" + std::to_string(r) + ".json";
    std::ifstream in(from / name);
    nlohmann::json dump = nlohmann::json::parse(in);
    if (r == 3) {
      nlohmann::json& entry = dump["entries"][2];
      entry["input_sizes"] = entry["output_sizes"] = {{1024}};
      edit(entry);
    }
    std::ofstream(to / name) << dump.dump();
  }
}

//! A dtype or operation mismatch in a hung collective replays into the mismatch report
//! naming the rank that differs (exit 4), as the size mismatch does.
TEST(FrCliTest, DtypeAndOperationMismatches) {
  testing::TempDir dtype("ranklab_fr_dtype");
  write_variant(dtype.path(), [](nlohmann::json& e) {
    e["input_dtypes"] = e["output_dtypes"] = {"Double"};
  });
  const CommandResult d = ranklab("replay --format pytorch-fr " + shell_quoted(dtype.path()));
  EXPECT_EQ(d.exit_code, 4) << d.out << d.err;
  EXPECT_TRUE(has(d.out, "all_reduce(sum, f64, count=1024)   <-- differs")) << d.out;

  testing::TempDir op("ranklab_fr_op");
  write_variant(op.path(), [](nlohmann::json& e) { e["profiling_name"] = "nccl:all_gather"; });
  const CommandResult o = ranklab("replay --format pytorch-fr " + shell_quoted(op.path()));
  EXPECT_EQ(o.exit_code, 4) << o.out << o.err;
  EXPECT_TRUE(has(o.out, "\nrank 3 is the odd one: 1 rank vs 3\n")) << o.out;
  EXPECT_TRUE(has(o.out, "all_gather(")) << o.out;
}

//! Issue 28 §4: a replay's refusal of an imported operation named no file or entry ("rank 3
//! op #2 (all_reduce): cannot replay: ..."); it names the dump and the entry now.
TEST(FrCliTest, ReplayRefusalNamesTheDumpAndEntry) {
  testing::TempDir dir("ranklab_fr_refusal");
  write_variant(dir.path(), [](nlohmann::json& e) {
    e["input_sizes"] = e["output_sizes"] = {{std::uint64_t{1} << 40}};
  });
  const CommandResult r = ranklab("replay --format pytorch-fr " + shell_quoted(dir.path()));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.err, "nccl_trace_rank_3.json: entry 2: rank 3 op #"))
      << r.err;
  EXPECT_TRUE(has(r.err, "cannot replay: its buffers exceed the replay limit")) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

//! Issue 28 §1's classic bug as Flight Recorder dumps: rank 0 is stuck in an all_reduce of
//! its loss (1 element) that the others never make; they are stuck in their gradients'
//! (1024). Every rank's recorded call is read, so under every policy and thread count the
//! table has all four (none "not called yet") and rank 0 is blamed, 1 rank against 3, in
//! the same words.
TEST(FrCliTest, TheRankThatDiffersIsBlamedUnderEveryPolicy) {
  testing::TempDir dir("ranklab_fr_skip");
  const std::filesystem::path from = examples() / "size_mismatch" / "json";
  for (int r = 0; r < 4; ++r) {
    const std::string name = "nccl_trace_rank_" + std::to_string(r) + ".json";
    std::ifstream in(from / name);
    nlohmann::json dump = nlohmann::json::parse(in);
    nlohmann::json& stuck = dump["entries"][2];
    stuck["input_sizes"] = stuck["output_sizes"] = {{r == 0 ? 1 : 1024}};
    std::ofstream(dir / name) << dump.dump();
  }
  std::string first;
  for (const char* policy : {"rank-order", "random:1", "random:2", "random:3", "pct:11:3"}) {
    for (const char* threads : {"1", "2"}) {
      const CommandResult run = ranklab("replay --format pytorch-fr " + shell_quoted(dir.path()) +
                                        " --policy " + policy + " --threads " + threads);
      SCOPED_TRACE(std::string(policy) + " --threads " + threads);
      EXPECT_EQ(run.exit_code, 4) << run.out << run.err;
      EXPECT_TRUE(has(run.out, "\nrank 0 is the odd one: 1 rank vs 3\n")) << run.out;
      EXPECT_TRUE(has(run.out, "where ranks 1-3 called all_reduce(sum, f32, count=1024)"))
          << run.out;
      EXPECT_FALSE(has(run.out, "never called")) << run.out;
      for (int r = 1; r < 4; ++r) {
        EXPECT_TRUE(has(run.out, fmt::format("  {:>10}  {:>11}  2         all_reduce(sum, f32, "
                                             "count=1024)", r, r)))
            << run.out;
      }
      // The report from its table on, which names no policy, but for the replay's timing.
      const std::string report = without_timing(
          run.out.substr(std::min(run.out.find("collective mismatch in"), run.out.size())));
      if (first.empty()) first = report;
      EXPECT_EQ(report, first);
    }
  }
}

//! Bad input is one line naming the file (and entry), exit 1.
TEST(FrCliTest, BadInputIsOneLine) {
  testing::TempDir dir("ranklab_fr_bad");
  {
    std::ofstream(dir / "nccl_trace_rank_0.json") << R"({"version":"2.4","pg_config":{},)"
                                                     R"("entries":[{"profiling_name":"nccl:foo"}]})";
  }
  const CommandResult bad = ranklab("replay --format pytorch-fr " + shell_quoted(dir.path()));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_TRUE(has(bad.err, "nccl_trace_rank_0.json: entry 0: missing required field")) << bad.err;
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;

  const CommandResult format = ranklab("stats --format torch " + shell_quoted(dir.path()));
  EXPECT_EQ(format.exit_code, 1);
  EXPECT_TRUE(has(format.err, "unknown --format 'torch': expected ranklab, simgrid-ti, pytorch-fr, nccl-log or nccl-ras"))
      << format.err;

  const CommandResult two = ranklab("replay " + shell_quoted(dir / "a.jsonl") + " " +
                                    shell_quoted(dir / "b.jsonl"));
  EXPECT_EQ(two.exit_code, 1);
  EXPECT_TRUE(has(two.err, "only --format pytorch-fr and nccl-log take several files")) << two.err;
}

}  // namespace
}  // namespace ranklab
