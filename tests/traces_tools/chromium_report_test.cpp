// The HTML report rendered in headless Chromium: the page's script runs without errors
// and draws what it should. The page writes what it drew into <html data-*> attributes,
// which --dump-dom shows: the verdict (data-verdict, data-culprit-kind, data-blocked,
// data-cycle), the arrows (data-backward-arrows), and so on. Each page is also screenshot
// (8 and 512 ranks); RANKLAB_REPORT_SCREENSHOTS=DIR keeps the PNGs there to look at.
// Skipped, with a message, where Chromium is not installed (Debian: apt-get install
// chromium); RANKLAB_CHROMIUM names another binary.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>

#include "tests/support/temp_dir.hpp"
#include "tests/traces_tools/run_command.hpp"
#include "tests/traces_tools/tools_support.hpp"

namespace ranklab {
namespace {

using tools_testing::CommandResult;
using tools_testing::run_command;
using tools_testing::shell_quoted;

/// The Chromium binary, or "" if there is none.
std::string find_chromium() {
  if (const char* named = std::getenv("RANKLAB_CHROMIUM"); named != nullptr && *named != '\0') {
    return named;
  }
  for (const char* name :
       {"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}) {
    const CommandResult found = run_command(std::string("command -v ") + name);
    if (found.exit_code == 0 && !found.out.empty())
      return found.out.substr(0, found.out.find('\n'));
  }
  return "";
}

/// `text` with the entities a DOM dump writes for <, >, & and " read back.
std::string unescaped(std::string text) {
  for (const auto& [entity, c] : {std::pair{"&lt;", "<"}, std::pair{"&gt;", ">"},
                                  std::pair{"&quot;", "\""}, std::pair{"&amp;", "&"}}) {
    for (std::size_t at = text.find(entity); at != std::string::npos; at = text.find(entity, at + 1)) {
      text.replace(at, std::string(entity).size(), c);
    }
  }
  return text;
}

/// The value of `<html ... name="VALUE"` in a DOM dump, or "" if absent.
std::string html_attribute(const std::string& dom, const std::string& name) {
  const std::regex pattern("<html[^>]*\\s" + name + "=\"([^\"]*)\"");
  std::smatch match;
  return std::regex_search(dom, match, pattern) ? unescaped(match[1].str()) : "";
}

int int_attribute(const std::string& dom, const std::string& name) {
  const std::string value = html_attribute(dom, name);
  EXPECT_FALSE(value.empty()) << name << " is not on the page";
  return value.empty() ? -1 : std::stoi(value);
}

/// The line of `text` that starts with `prefix`, or "".
std::string line_starting(const std::string& text, const std::string& prefix) {
  const std::size_t at = text.find("\n" + prefix);
  if (at == std::string::npos) return "";
  return text.substr(at + 1, text.find('\n', at + 1) - at - 1);
}

class ChromiumReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    chromium_ = find_chromium();
    if (chromium_.empty()) {
      GTEST_SKIP() << "Chromium is not installed (apt-get install -y chromium); the HTML "
                      "report was not rendered";
    }
  }

  /// Exports `example` to HTML and returns Chromium's DOM dump of the rendered page.
  std::string render(const std::string& example) {
    return render_trace(tools_testing::examples_dir() / example);
  }

  /// The same for any trace; `export_args` go to `ranklab export` (--format, --no-verdict).
  std::string render_trace(const std::filesystem::path& trace, const std::string& export_args = "") {
    const CommandResult exported =
        run_command(std::string("'") + RANKLAB_BINARY + "' export " + shell_quoted(trace) + " " +
                    export_args + " --html " + shell_quoted(html()));
    EXPECT_EQ(exported.exit_code, 0) << exported.err;
    const CommandResult dump = run_command(chromium_command() + " --dump-dom " + page_url());
    EXPECT_EQ(dump.exit_code, 0) << dump.err;
    EXPECT_EQ(dump.err.find("Uncaught"), std::string::npos) << dump.err;
    EXPECT_EQ(html_attribute(dump.out, "data-status"), "ok") << dump.out.substr(0, 2000);
    EXPECT_EQ(html_attribute(dump.out, "data-errors"), "0");
    return dump.out;
  }

  /// Screenshots the page last rendered as `name`.png: a PNG of some size (a blank page
  /// compresses to a few KB), kept in RANKLAB_REPORT_SCREENSHOTS if set.
  void screenshot(const std::string& name) {
    const char* keep = std::getenv("RANKLAB_REPORT_SCREENSHOTS");
    const std::filesystem::path folder = keep != nullptr && *keep != '\0' ? keep : dir_.path();
    std::filesystem::create_directories(folder);
    const auto png = folder / (name + ".png");
    std::filesystem::remove(png);
    const CommandResult shot = run_command(chromium_command() + " --window-size=1400,1400 --screenshot=" +
                                           shell_quoted(png) + " " + page_url());
    ASSERT_EQ(shot.exit_code, 0) << shot.err;
    ASSERT_TRUE(std::filesystem::exists(png)) << shot.err;
    EXPECT_EQ(tools_testing::read_text(png).substr(1, 3), "PNG");
    EXPECT_GT(std::filesystem::file_size(png), 20'000u) << png;
  }

  std::filesystem::path html() const { return dir_ / "report.html"; }
  std::string page_url() const { return shell_quoted("file://" + html().string()); }

  /// A fresh profile, no network services, and a hard time limit.
  std::string chromium_command() const {
    return "timeout 90 " + shell_quoted(chromium_) +
           " --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking"
           " --disable-component-update --disable-sync --disable-extensions --user-data-dir=" +
           shell_quoted(dir_ / "profile");
  }

  /// Records `ranklab run ARGS --trace FILE` into the temp folder; returns the trace.
  std::filesystem::path record(const std::string& name, const std::string& args) {
    const auto trace = dir_ / name;
    const CommandResult run = run_command(std::string("'") + RANKLAB_BINARY + "' run " + args +
                                          " --trace " + shell_quoted(trace));
    EXPECT_TRUE(run.exit_code == 0 || run.exit_code == 3) << run.out << run.err;
    return trace;
  }

  /// The culprit line `ranklab replay TRACE` prints ("culprit (KIND): ...").
  static std::string replay_culprit(const std::filesystem::path& trace) {
    const CommandResult replay =
        run_command(std::string("'") + RANKLAB_BINARY + "' replay " + shell_quoted(trace));
    return line_starting(replay.out, "culprit (");
  }

  /// The verdict on the page of `trace`: the status, the culprit kind, the line `ranklab
  /// replay` prints word for word, how many operations are outlined as blocked, the cycle.
  static void expect_verdict(const std::string& dom, const std::filesystem::path& trace,
                             const std::string& kind, int blocked, const std::string& cycle) {
    EXPECT_EQ(html_attribute(dom, "data-verdict"), "deadlock");
    EXPECT_EQ(html_attribute(dom, "data-culprit-kind"), kind);
    EXPECT_EQ(int_attribute(dom, "data-blocked"), blocked);
    EXPECT_EQ(html_attribute(dom, "data-cycle"), cycle);
    const std::string culprit = replay_culprit(trace);
    ASSERT_TRUE(culprit.starts_with("culprit (" + kind + "): ")) << culprit;
    EXPECT_NE(unescaped(dom).find(culprit), std::string::npos) << culprit;
    // The verdict comes before the timeline.
    EXPECT_LT(dom.find("id=\"verdict\""), dom.find("id=\"timeline\""));
  }

  std::string chromium_;
  testing::TempDir dir_{"ranklab_chromium"};
};

//! The seed's 8-rank step, a healthy run: the verdict "ok" first, no culprit, nothing
//! blocked or lost; 8 timeline rows, arrows for its 8 messages, heatmap cells, the
//! tp/pp/dp/world kinds, call sites in the tooltips, the config as rows.
TEST_F(ChromiumReportTest, SeedStepDrawsEveryRank) {
  const std::string dom = render("seed_step_w8.jsonl");
  EXPECT_EQ(html_attribute(dom, "data-verdict"), "ok");
  EXPECT_EQ(html_attribute(dom, "data-culprit-kind"), "");
  EXPECT_EQ(int_attribute(dom, "data-blocked"), 0);
  EXPECT_EQ(int_attribute(dom, "data-lost"), 0);
  EXPECT_EQ(html_attribute(dom, "data-cycle"), "");
  EXPECT_EQ(int_attribute(dom, "data-rows"), 8);
  EXPECT_EQ(int_attribute(dom, "data-arrows"), 8);
  EXPECT_EQ(int_attribute(dom, "data-backward-arrows"), 0);
  EXPECT_EQ(int_attribute(dom, "data-cells"), 8);
  EXPECT_EQ(int_attribute(dom, "data-kinds"), 4);
  EXPECT_EQ(int_attribute(dom, "data-site-tooltips"), 108);  // every operation has its site
  EXPECT_TRUE(std::regex_search(dom, std::regex(R"(<title>[^<]*called at [a-z_/]+\.cpp:\d+)")));
  EXPECT_GE(int_attribute(dom, "data-config-rows"), 5);
  EXPECT_EQ(dom.find("{&quot;"), std::string::npos) << "raw JSON config on the page";
  // The axis: Lamport ticks, labelled; no label drawn over another.
  EXPECT_GE(int_attribute(dom, "data-ticks"), 3);
  EXPECT_EQ(html_attribute(dom, "data-axis-unit"), "ticks");
  EXPECT_EQ(int_attribute(dom, "data-label-overlaps"), 0);
  EXPECT_TRUE(std::regex_search(dom, std::regex(R"(<text class="tick-label"[^>]*>\d+ ticks</text>)")));
  EXPECT_EQ(dom.find(">1 ticks<"), std::string::npos);
  screenshot("seed_step_w8");
}

//! 512 ranks timed by the cost model: 64 rows of 8 ranks, labelled "ranks 8-15", an axis
//! in microseconds, no two labels overlapping as Chromium lays them out, the verdict ok and
//! every one of the 512 arrows forward in time.
TEST_F(ChromiumReportTest, ManyRanksGetGroupedRows) {
  const auto trace = record("ring512.jsonl", "--scenario ring --world 512 --cost alpha=5e-5,beta=1e9");
  const std::string dom = render_trace(trace);
  EXPECT_EQ(html_attribute(dom, "data-verdict"), "ok");
  EXPECT_EQ(int_attribute(dom, "data-blocked"), 0);
  EXPECT_EQ(int_attribute(dom, "data-rows"), 64);
  EXPECT_EQ(int_attribute(dom, "data-arrows"), 512);
  EXPECT_EQ(int_attribute(dom, "data-backward-arrows"), 0);
  EXPECT_EQ(html_attribute(dom, "data-axis-unit"), "us");
  EXPECT_GE(int_attribute(dom, "data-ticks"), 3);
  EXPECT_EQ(int_attribute(dom, "data-label-overlaps"), 0);
  EXPECT_TRUE(std::regex_search(dom, std::regex(R"(<text class="row-label"[^>]*>ranks 8-15</text>)")));
  EXPECT_TRUE(std::regex_search(dom, std::regex(R"(<text class="tick-label"[^>]*>[\d.]+ us</text>)")));
  EXPECT_NE(dom.find("8 consecutive ranks per row"), std::string::npos);
  screenshot("ring_w512");
}

//! 512 ranks that deadlock (rank 511 returns without entering a barrier): the verdict with
//! the line `ranklab replay` prints, all 511 blocked barriers outlined, no cycle.
TEST_F(ChromiumReportTest, ManyRanksDeadlockSaysTheVerdict) {
  const auto trace = record("missing_barrier512.jsonl", "--scenario missing-barrier --world 512");
  const std::string dom = render_trace(trace);
  expect_verdict(dom, trace, "missing-participant", 511, "");
  EXPECT_EQ(int_attribute(dom, "data-rows"), 64);
  EXPECT_EQ(int_attribute(dom, "data-label-overlaps"), 0);
  EXPECT_NE(dom.find("and 495 more ranks"), std::string::npos);  // the list stays short
  screenshot("missing_barrier_w512");
}

//! Two ranks that each send first: the page says DEADLOCK, culprit send-cycle with the
//! very line `ranklab replay` prints, both sends outlined as blocked, the cycle 0 -> 1 ->
//! 0 drawn as two edges, their call sites in the tooltips.
TEST_F(ChromiumReportTest, SendSendDeadlockSaysTheVerdict) {
  const std::string dom = render("send_send_deadlock.jsonl");
  expect_verdict(dom, tools_testing::examples_dir() / "send_send_deadlock.jsonl", "send-cycle", 2,
                 "0 -> 1 -> 0");
  EXPECT_EQ(int_attribute(dom, "data-cycle-edges"), 2);
  EXPECT_EQ(int_attribute(dom, "data-site-tooltips"), 2);
  EXPECT_EQ(dom.find(">1 ticks<"), std::string::npos);
  screenshot("send_send_deadlock");
}

//! A deadlocked run without a cycle (rank 3 skips a barrier): missing-participant, the
//! three ranks' barriers outlined, no cycle drawn.
TEST_F(ChromiumReportTest, MissingBarrierSaysTheVerdict) {
  const std::string dom = render("missing_barrier_deadlock.jsonl");
  expect_verdict(dom, tools_testing::examples_dir() / "missing_barrier_deadlock.jsonl",
                 "missing-participant", 3, "");
  EXPECT_EQ(int_attribute(dom, "data-cycle-edges"), 0);
  EXPECT_EQ(int_attribute(dom, "data-rows"), 4);
  EXPECT_EQ(int_attribute(dom, "data-arrows"), 0);
  EXPECT_EQ(int_attribute(dom, "data-cells"), 0);
}

//! A timed run (the main job under a cost model, compute priced): compute slices drawn,
//! every arrow from its send forward to its receive's completion.
TEST_F(ChromiumReportTest, TimedTraceDrawsComputeAndForwardArrows) {
  const auto trace = record("main_cost.jsonl", "--cost alpha=5e-6,beta=1e10,flops=1e9");
  const std::string dom = render_trace(trace);
  EXPECT_EQ(html_attribute(dom, "data-verdict"), "ok");
  EXPECT_EQ(html_attribute(dom, "data-axis-unit"), "us");
  EXPECT_EQ(int_attribute(dom, "data-arrows"), 8);
  EXPECT_EQ(int_attribute(dom, "data-backward-arrows"), 0);
  EXPECT_GT(int_attribute(dom, "data-compute"), 0);
  EXPECT_EQ(int_attribute(dom, "data-label-overlaps"), 0);
}

//! Flight Recorder dumps with host times (a late rank): timed in ms, verdict ok.
TEST_F(ChromiumReportTest, FlightRecorderLateRank) {
  const std::string dom =
      render_trace(tools_testing::examples_dir() / "fr" / "late_rank", "--format pytorch-fr");
  EXPECT_EQ(html_attribute(dom, "data-verdict"), "ok");
  EXPECT_EQ(html_attribute(dom, "data-axis-unit"), "ms");
  EXPECT_EQ(int_attribute(dom, "data-backward-arrows"), 0);
}

//! The network drops stage 0's first activation: the send that no receive took is marked.
TEST_F(ChromiumReportTest, LostMessageIsMarked) {
  const std::string dom = render_trace(record("lost.jsonl", "--scenario lost-message"));
  EXPECT_EQ(html_attribute(dom, "data-verdict"), "deadlock");
  EXPECT_EQ(int_attribute(dom, "data-lost"), 1);
  EXPECT_GT(int_attribute(dom, "data-blocked"), 0);
  EXPECT_EQ(int_attribute(dom, "data-backward-arrows"), 0);
}

//! --no-verdict: the page says it was not diagnosed, and draws the rest.
TEST_F(ChromiumReportTest, WithoutVerdict) {
  const std::string dom =
      render_trace(tools_testing::examples_dir() / "send_send_deadlock.jsonl", "--no-verdict");
  EXPECT_EQ(html_attribute(dom, "data-verdict"), "unknown");
  EXPECT_EQ(int_attribute(dom, "data-blocked"), 0);
  EXPECT_NE(dom.find("Not diagnosed"), std::string::npos);
}

}  // namespace
}  // namespace ranklab
