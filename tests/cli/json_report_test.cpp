// `--json` on every command that ends in a report (docs/json.md): for each, a healthy and a
// failing case whose JSON is checked field by field against the text report of the same
// command, and a schema test that fails when a field docs/json.md lists is missing.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "tests/cli/cli_support.hpp"

namespace ranklab::testing {
namespace {

using Json = nlohmann::json;

std::string example(const std::string& name) {
  return (std::filesystem::path(RANKLAB_SOURCE_DIR) / "traces/examples" / name).string();
}

// The text's last line that starts with `prefix` (after any indentation), without it; empty
// if there is none.
std::string line_after(const std::string& text, const std::string& prefix) {
  std::istringstream lines(text);
  std::string found;
  for (std::string line; std::getline(lines, line);) {
    line.erase(0, line.find_first_not_of(' '));
    if (line.starts_with(prefix)) found = line.substr(prefix.size());
  }
  return found;
}

// A result line without its timing ("(3 runs in 0.02 s, 189 schedules/s)"), which differs
// from one run to the next.
std::string untimed(const std::string& line) {
  return std::regex_replace(line, std::regex(R"( in [0-9.]+ s, [0-9]+ schedules/s\))"), ")");
}

// The same command as text and as JSON: the same exit code, the JSON parsed.
struct Both {
  Result text;
  Result json_run;
  Json json;
};

Both run_both(std::vector<std::string> args, const std::filesystem::path& cwd = {}) {
  Both b;
  b.text = ranklab(args, cwd);
  args.push_back("--json");
  b.json_run = ranklab(args, cwd);
  EXPECT_EQ(b.json_run.code, b.text.code) << show(b.json_run);
  try {
    b.json = Json::parse(b.json_run.out);
  } catch (const Json::exception& e) {
    ADD_FAILURE() << "not JSON: " << e.what() << "\n" << show(b.json_run);
  }
  return b;
}

// The fields every document has, and its result line equal to the text's.
void expect_header(const Both& b, const std::string& command, const std::string& status) {
  const Json& j = b.json;
  EXPECT_EQ(j.value("schema", ""), "ranklab-report/1");
  EXPECT_EQ(j.value("command", ""), command);
  EXPECT_EQ(j.value("status", ""), status) << b.json_run.out;
  EXPECT_EQ(j.value("exit_code", -1), b.text.code);
  if (j.contains("result")) {
    EXPECT_EQ(untimed(j["result"].get<std::string>()), untimed(line_after(b.text.out, "result: ")))
        << show(b.text);
  }
}

// The ranks a text line lists: "rank 3" or "ranks 0-2, 5 (4 ranks)" (traces/rank_list.hpp).
std::set<int> listed_ranks(const std::string& line) {
  std::set<int> out;
  static const std::regex entry(R"((\d+)(?:-(\d+))?)");
  const std::string list = line.substr(0, line.find_first_of(":("));
  for (std::sregex_iterator it(list.begin(), list.end(), entry), end; it != end; ++it) {
    const int first = std::stoi((*it)[1]);
    const int last = (*it)[2].matched ? std::stoi((*it)[2]) : first;
    for (int r = first; r <= last; ++r) out.insert(r);
  }
  return out;
}

// A run's report (docs/json.md, "A run's report") against the text that prints it.
void expect_run_report_matches(const Json& j, const std::string& text) {
  const bool ok = j["run_status"] == "ok";
  EXPECT_EQ(j["culprit"].is_null(), ok) << j.dump(2);
  if (!ok) {
    const Json& c = j["culprit"];
    EXPECT_EQ(c["line"].get<std::string>(),
              "culprit (" + line_after(text, "culprit (")) << text;
    EXPECT_EQ(c["line"].get<std::string>(),
              "culprit (" + c["kind"].get<std::string>() + "): " + c["text"].get<std::string>());
    for (const Json& op : c["operations"]) {
      const auto& groups = c["groups"];
      EXPECT_NE(std::find(groups.begin(), groups.end(), op["group"]), groups.end()) << op.dump();
      EXPECT_NE(text.find(op["call"].get<std::string>()), std::string::npos) << op.dump();
    }
  }
  for (const Json& op : j["blocked"]) {
    // The text lists identical operations once, with their ranks: the line of this one
    // names its rank.
    const std::string call = ": " + op["text"].get<std::string>() + "\n";
    const std::size_t at = text.find(call);
    ASSERT_NE(at, std::string::npos) << call << "in\n" << text;
    const std::size_t start = text.find_first_not_of(' ', text.rfind('\n', at) + 1);
    EXPECT_EQ(listed_ranks(text.substr(start, at - start)).count(op["rank"].get<int>()), 1u)
        << op.dump() << "\nin\n" << text;
    if (!op["site"].is_null()) {
      EXPECT_NE(op["text"].get<std::string>().find(op["site"]["file"].get<std::string>()),
                std::string::npos);
    }
  }
  for (const Json& cycle : j["cycles"]) {
    std::string drawn;
    for (const Json& r : cycle) drawn += (drawn.empty() ? "" : " -> ") + std::to_string(r.get<int>());
    EXPECT_NE(text.find("  " + drawn + "\n"), std::string::npos) << drawn << "\n" << text;
  }
  for (const Json& finding : j["analysis"]["findings"]) {
    EXPECT_NE(text.find("  " + finding.get<std::string>() + "\n"), std::string::npos) << finding;
  }
  int previous = -1;
  for (const Json& events : j["analysis"]["last_events"]) {
    const int rank = events["rank"].get<int>();
    EXPECT_GT(rank, previous) << "last events out of rank order";
    previous = rank;
    EXPECT_NE(text.find("  rank " + std::to_string(rank) + ":"), std::string::npos);
  }
  EXPECT_NE(text.find(j["summary"].get<std::string>()), std::string::npos);
  // RunReport::details holds the culprit line too.
  if (!ok) {
    EXPECT_NE(j["details"].get<std::string>().find(j["culprit"]["line"].get<std::string>()),
              std::string::npos);
  }
  for (const Json& fault : j["faults"]) {
    EXPECT_NE(text.find("fault: " + fault.get<std::string>()), std::string::npos);
  }
}

//! A scenario: healthy, deadlocked, mismatched and crashed, each JSON against its text.
TEST(JsonReportTest, ScenarioMatchesText) {
  const std::pair<std::string, std::string> cases[] = {{"ring", "ok"},
                                                       {"send-send", "deadlock"},
                                                       {"collective-mismatch", "mismatch"},
                                                       {"crash", "rank failed"},
                                                       {"tag-mismatch", "deadlock"}};
  for (const auto& [scenario, status] : cases) {
    SCOPED_TRACE(scenario);
    const Both b = run_both({"run", "--scenario", scenario});
    expect_header(b, "run", status);
    EXPECT_EQ(b.json["scenario"], scenario);
    expect_run_report_matches(b.json, b.text.out);
    const Json& outcomes = b.json["outcomes"];
    EXPECT_EQ(outcomes.size(), b.json["world"].get<std::size_t>());
    for (const Json& line : b.json["output"]) {
      EXPECT_NE(b.text.out.find(line.get<std::string>() + "\n"), std::string::npos);
    }
  }
}

//! The send cycle's culprit names both sends, with their sites, and the cycle.
TEST(JsonReportTest, DeadlockCulpritNamesOperationsAndSites) {
  const Both b = run_both({"run", "--scenario", "send-send"});
  const Json& c = b.json["culprit"];
  EXPECT_EQ(c["kind"], "send-cycle");
  EXPECT_EQ(c["ranks"], Json::parse("[0, 1]"));
  EXPECT_EQ(c["groups"], Json::parse(R"(["world"])"));
  ASSERT_EQ(c["operations"].size(), 2u);
  EXPECT_EQ(c["operations"][0]["op"], "send");
  EXPECT_EQ(c["operations"][0]["site"]["file"], "cli/scenarios/basic.cpp");
  EXPECT_GT(c["operations"][0]["site"]["line"].get<int>(), 0);
  EXPECT_EQ(b.json["cycles"], Json::parse("[[0, 1, 0]]"));
  EXPECT_EQ(b.json["blocked_total"], 2);
  EXPECT_EQ(b.json["outcomes"][0]["state"], "deadlocked");
}

//! The main job: healthy, and with a rank killed.
TEST(JsonReportTest, MainJobMatchesText) {
  TempDir cwd("ranklab_json_main");
  const Both ok = run_both({"run", "--no-trace"}, cwd.path());
  expect_header(ok, "run", "ok");
  EXPECT_EQ(ok.json["program"], "main job");
  EXPECT_TRUE(ok.json["checks_ok"].get<bool>());
  expect_run_report_matches(ok.json, ok.text.out);

  const Both killed = run_both({"run", "--no-trace", "--fault", "kill:5@1"}, cwd.path());
  expect_header(killed, "run", "rank failed");
  EXPECT_EQ(killed.json["culprit"]["kind"], "rank-failure");
  EXPECT_EQ(killed.json["root_cause_rank"], 5);
  expect_run_report_matches(killed.json, killed.text.out);
  EXPECT_FALSE(killed.json["blocked"].empty()) << "the survivors' blocked operations";
}

//! run --compare-rank-order: a schedule whose float sum differs from rank order's.
TEST(JsonReportTest, CompareRankOrderMatchesText) {
  const Both same = run_both({"run", "--scenario", "ring", "--compare-rank-order"});
  expect_header(same, "run", "ok");
  EXPECT_TRUE(same.json["comparison"]["same"].get<bool>());

  const Both differs = run_both(
      {"run", "--scenario", "wildcard-sum", "--policy", "random:1", "--compare-rank-order"});
  ASSERT_EQ(differs.text.code, 2) << show(differs.text);
  expect_header(differs, "run", "nondeterminism");
  EXPECT_FALSE(differs.json["comparison"]["same"].get<bool>());
  EXPECT_EQ(differs.json["comparison"]["why"].get<std::string>(),
            line_after(differs.text.out, "compared with rank-order: "));
}

//! replay: a trace that reproduces, and one that deadlocks.
TEST(JsonReportTest, ReplayMatchesText) {
  const Both ok = run_both({"replay", example("allreduce_w8.jsonl")});
  expect_header(ok, "replay", "reproduced");
  EXPECT_TRUE(ok.json["reproduced"].get<bool>());
  expect_run_report_matches(ok.json, ok.text.out);

  const Both dead = run_both({"replay", example("send_send_deadlock.jsonl")});
  expect_header(dead, "replay", "deadlock");
  EXPECT_EQ(dead.json["culprit"]["kind"], "send-cycle");
  expect_run_report_matches(dead.json, dead.text.out);
}

//! explore: every schedule passes; a deadlock is found, its run's own report under failure.
TEST(JsonReportTest, ExploreMatchesText) {
  const Both ok = run_both({"explore", "--scenario", "ring", "--runs", "3", "--jobs", "1"});
  expect_header(ok, "explore", "ok");
  EXPECT_TRUE(ok.json["failure"].is_null());
  EXPECT_EQ(ok.json["planned"], 3);

  const Both dead =
      run_both({"explore", "--scenario", "send-send", "--runs", "2", "--jobs", "1"});
  expect_header(dead, "explore", "deadlock");
  const Json& f = dead.json["failure"];
  EXPECT_EQ(f["reproduce"].get<std::string>(), line_after(dead.text.out, "reproduce: "));
  EXPECT_EQ(f["schedule"], 1);
  EXPECT_EQ(f["run"]["command"], "run");
  EXPECT_EQ(f["run"]["culprit"]["kind"], "send-cycle");
  expect_run_report_matches(f["run"], dead.text.out);
}

//! schedule: a valid one, and a saved file edited into a deadlock.
TEST(JsonReportTest, ScheduleMatchesText) {
  TempDir dir("ranklab_json_schedule");
  const Both ok = run_both(
      {"schedule", "--schedule", "1f1b", "--pp", "2", "--microbatches", "3", "--save", "s.txt"},
      dir.path());
  expect_header(ok, "schedule", "ok");
  ASSERT_EQ(ok.json["stages"].size(), 2u);
  for (const Json& stage : ok.json["stages"]) {
    EXPECT_NE(ok.text.out.find("  stage " + std::to_string(stage["stage"].get<int>()) + ": " +
                               stage["compute_order"].get<std::string>() + "\n"),
              std::string::npos);
  }
  EXPECT_FALSE(ok.json["comparison"].empty());

  std::string text = read_file(dir / "s.txt");
  for (const auto& [line, into] :
       {std::pair<std::string, std::string>{"stage 0: send act m2 -> 1, recv grad m1 <- 1\n",
                                            "stage 0: send act m2 -> 1\nstage 0: recv grad m1 <- 1\n"},
        {"stage 1: send grad m1 -> 0, recv act m2 <- 0\n",
         "stage 1: send grad m1 -> 0\nstage 1: recv act m2 <- 0\n"}}) {
    const std::size_t at = text.find(line);
    ASSERT_NE(at, std::string::npos) << text;
    text.replace(at, line.size(), into);
  }
  std::ofstream(dir / "broken.txt") << text;
  const Both broken = run_both({"schedule", "--file", "broken.txt"}, dir.path());
  expect_header(broken, "schedule", "deadlock");
  EXPECT_EQ(broken.json["validation"]["problem"].get<std::string>(),
            line_after(broken.text.out, "validation: REJECTED: "));
}

//! diff: identical traces, and different ones.
TEST(JsonReportTest, DiffMatchesText) {
  const Both same =
      run_both({"diff", example("allreduce_w8.jsonl"), example("allreduce_w8.jsonl")});
  expect_header(same, "diff", "identical");
  EXPECT_TRUE(same.json["identical"].get<bool>());
  const Both differ = run_both(
      {"diff", example("allreduce_ring_w4.jsonl"), example("allreduce_ring_w4_random7.jsonl")});
  expect_header(differ, "diff", differ.text.code == 0 ? "identical" : "different");
  EXPECT_EQ(differ.json["identical"].get<bool>(), differ.text.code == 0);
}

//! stats: a trace's statistics, with the header.
TEST(JsonReportTest, StatsMatchesText) {
  const Both b = run_both({"stats", example("allreduce_w8.jsonl")});
  expect_header(b, "stats", "ok");
  EXPECT_EQ(b.json["trace"], example("allreduce_w8.jsonl"));
  // A bad input is one error line, not a document.
  expect_usage_error(ranklab({"stats", "/nonexistent.jsonl", "--json"}), "/nonexistent.jsonl");
}

// The fields docs/json.md lists in a table whose header is `heading`: each row's first
// backquoted name.
std::vector<std::string> documented_fields(const std::string& heading) {
  const std::string doc =
      read_file(std::filesystem::path(RANKLAB_SOURCE_DIR) / "docs/json.md");
  std::size_t at = doc.find(heading);
  EXPECT_NE(at, std::string::npos) << heading;
  std::vector<std::string> fields;
  std::istringstream lines(doc.substr(at));
  bool in_table = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("| `")) {
      in_table = true;
      fields.push_back(line.substr(3, line.find('`', 3) - 3));
    } else if (in_table && !line.starts_with("|")) {
      break;
    }
  }
  EXPECT_FALSE(fields.empty()) << heading;
  return fields;
}

// The top-level fields docs/json.md lists for one command: the backquoted names of the
// paragraph that starts with `start`, outside parentheses and before "Only".
std::vector<std::string> command_fields(const std::string& start) {
  const std::string doc =
      read_file(std::filesystem::path(RANKLAB_SOURCE_DIR) / "docs/json.md");
  const std::size_t at = doc.find("\n" + start);
  EXPECT_NE(at, std::string::npos) << start;
  std::string paragraph = doc.substr(at + 1, doc.find("\n\n", at + 1) - at - 1);
  paragraph = paragraph.substr(start.size());
  paragraph = paragraph.substr(0, paragraph.find("Only"));
  std::string outside;
  int depth = 0;
  for (const char c : paragraph) {
    depth += c == '(';
    if (depth == 0) outside += c;
    depth -= c == ')' && depth > 0;
  }
  std::vector<std::string> fields;
  const std::regex name("`([a-z_]+)`");
  for (auto it = std::sregex_iterator(outside.begin(), outside.end(), name);
       it != std::sregex_iterator(); ++it) {
    fields.push_back((*it)[1]);
  }
  EXPECT_FALSE(fields.empty()) << start;
  return fields;
}

void expect_fields(const Json& j, const std::vector<std::string>& fields, const std::string& what) {
  for (const std::string& f : fields) EXPECT_TRUE(j.contains(f)) << what << " lacks " << f;
}

//! Every field docs/json.md documents is in the documents of every command.
TEST(JsonReportTest, DocumentedFieldsArePresent) {
  const auto every = documented_fields("## Fields of every document");
  const auto run = documented_fields("## A run's report");
  const auto culprit = documented_fields("`culprit`:");
  const auto operation = documented_fields("An operation (in");

  const Both scenario = run_both({"run", "--scenario", "send-send"});
  const Both main_job = run_both({"run", "--no-trace", "--fault", "kill:5@1"});
  const Both replay = run_both({"replay", example("send_send_deadlock.jsonl")});
  const Both explore = run_both({"explore", "--scenario", "send-send", "--runs", "2"});
  for (const Both* b : {&scenario, &main_job, &replay}) {
    expect_fields(b->json, every, b->json.value("command", "?"));
    expect_fields(b->json, run, b->json.value("command", "?"));
    expect_fields(b->json["culprit"], culprit, "culprit");
    ASSERT_FALSE(b->json["blocked"].empty());
    expect_fields(b->json["blocked"][0], operation, "operation");
  }
  expect_fields(explore.json, every, "explore");
  expect_fields(explore.json["failure"]["run"], run, "explore's failure.run");
  const Both schedule = run_both({"schedule"});
  const Both diff = run_both({"diff", example("allreduce_w8.jsonl"), example("allreduce_w8.jsonl")});
  const Both stats = run_both({"stats", example("allreduce_w8.jsonl")});
  for (const Both* b : {&schedule, &diff, &stats}) expect_fields(b->json, every, "document");

  expect_fields(main_job.json, command_fields("**run, the main job**"), "the main job");
  expect_fields(scenario.json, command_fields("**run --scenario**"), "a scenario");
  expect_fields(replay.json, command_fields("**replay**"), "replay");
  expect_fields(explore.json, command_fields("**explore**"), "explore");
  expect_fields(schedule.json, command_fields("**schedule**"), "schedule");
  expect_fields(diff.json, command_fields("**diff**"), "diff");
  expect_fields(stats.json, command_fields("**stats**"), "stats");
  const Both compared = run_both({"run", "--scenario", "ring", "--compare-rank-order"});
  expect_fields(compared.json, command_fields("**run --compare-rank-order**"), "comparison");
}

}  // namespace
}  // namespace ranklab::testing
