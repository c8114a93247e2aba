// The HTML report rendered in headless Chromium: the page's script runs without errors
// and draws what it should. The page writes what it drew into <html data-*> attributes,
// which --dump-dom shows. Skipped, with a message, where Chromium is not installed
// (Debian: apt-get install chromium); RANKLAB_CHROMIUM names another binary.
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>

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

/// The value of `<html ... name="VALUE"` in a DOM dump, or "" if absent.
std::string html_attribute(const std::string& dom, const std::string& name) {
  const std::regex pattern("<html[^>]*\\s" + name + "=\"([^\"]*)\"");
  std::smatch match;
  return std::regex_search(dom, match, pattern) ? match[1].str() : "";
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

  std::string render_trace(const std::filesystem::path& trace) {
    const auto html = dir_ / "report.html";
    const CommandResult exported =
        run_command(std::string("'") + RANKLAB_BINARY + "' export " + shell_quoted(trace) +
                    " --html " + shell_quoted(html));
    EXPECT_EQ(exported.exit_code, 0) << exported.err;
    // A fresh profile, no network services, and a hard time limit.
    const CommandResult dump = run_command(
        "timeout 90 " + shell_quoted(chromium_) +
        " --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking"
        " --disable-component-update --disable-sync --disable-extensions --user-data-dir=" +
        shell_quoted(dir_ / "profile") + " --dump-dom " + shell_quoted("file://" + html.string()));
    EXPECT_EQ(dump.exit_code, 0) << dump.err;
    EXPECT_EQ(dump.err.find("Uncaught"), std::string::npos) << dump.err;
    return dump.out;
  }

  std::string chromium_;
  testing::TempDir dir_{"ranklab_chromium"};
};

//! The seed's 8-rank step: no script errors, 8 timeline rows, arrows for its 8 messages,
//! heatmap cells, and the tp/pp/dp/world kinds.
TEST_F(ChromiumReportTest, SeedStepDrawsEveryRank) {
  const std::string dom = render("seed_step_w8.jsonl");
  EXPECT_EQ(html_attribute(dom, "data-status"), "ok") << dom.substr(0, 2000);
  EXPECT_EQ(html_attribute(dom, "data-errors"), "0");
  EXPECT_EQ(html_attribute(dom, "data-rows"), "8");
  EXPECT_EQ(html_attribute(dom, "data-arrows"), "8");
  EXPECT_EQ(html_attribute(dom, "data-cells"), "8");
  EXPECT_EQ(html_attribute(dom, "data-kinds"), "4");
  // The axis: Lamport ticks, labelled; no label drawn over another.
  EXPECT_GE(std::stoi(html_attribute(dom, "data-ticks")), 3);
  EXPECT_EQ(html_attribute(dom, "data-axis-unit"), "ticks");
  EXPECT_EQ(html_attribute(dom, "data-label-overlaps"), "0");
  EXPECT_TRUE(std::regex_search(dom, std::regex(R"(<text class="tick-label"[^>]*>\d+ ticks</text>)")));
}

//! 512 ranks timed by the cost model: 64 rows of 8 ranks, labelled "ranks 8-15", an axis
//! in microseconds, and no two labels overlapping as Chromium lays them out.
TEST_F(ChromiumReportTest, ManyRanksGetGroupedRows) {
  const auto trace = dir_ / "ring512.jsonl";
  const CommandResult run = run_command(std::string("'") + RANKLAB_BINARY +
                                        "' run --scenario ring --world 512 --cost "
                                        "alpha=5e-5,beta=1e9 --trace " + shell_quoted(trace));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const std::string dom = render_trace(trace);
  EXPECT_EQ(html_attribute(dom, "data-status"), "ok") << dom.substr(0, 2000);
  EXPECT_EQ(html_attribute(dom, "data-errors"), "0");
  EXPECT_EQ(html_attribute(dom, "data-rows"), "64");
  EXPECT_EQ(html_attribute(dom, "data-arrows"), "512");
  EXPECT_EQ(html_attribute(dom, "data-axis-unit"), "us");
  EXPECT_GE(std::stoi(html_attribute(dom, "data-ticks")), 3);
  EXPECT_EQ(html_attribute(dom, "data-label-overlaps"), "0");
  EXPECT_TRUE(std::regex_search(dom, std::regex(R"(<text class="row-label"[^>]*>ranks 8-15</text>)")));
  EXPECT_TRUE(std::regex_search(dom, std::regex(R"(<text class="tick-label"[^>]*>[\d.]+ us</text>)")));
  EXPECT_NE(dom.find("8 consecutive ranks per row"), std::string::npos);
}

//! A deadlocked run (pending operations only, no messages) renders too.
TEST_F(ChromiumReportTest, DeadlockRenders) {
  const std::string dom = render("missing_barrier_deadlock.jsonl");
  EXPECT_EQ(html_attribute(dom, "data-status"), "ok") << dom.substr(0, 2000);
  EXPECT_EQ(html_attribute(dom, "data-errors"), "0");
  EXPECT_EQ(html_attribute(dom, "data-rows"), "4");
  EXPECT_EQ(html_attribute(dom, "data-arrows"), "0");
  EXPECT_EQ(html_attribute(dom, "data-cells"), "0");
}

}  // namespace
}  // namespace ranklab
