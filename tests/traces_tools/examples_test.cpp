// Every committed example trace reads, and every tool runs on it and agrees with the
// others: the examples are what README and users try first.
#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <iterator>
#include <sstream>

#include "tests/traces_tools/chrome_trace_check.hpp"
#include "tests/traces_tools/tools_support.hpp"
#include "traces/diff.hpp"
#include "traces/export_html.hpp"
#include "traces/export_perfetto.hpp"
#include "traces/messages.hpp"
#include "traces/stats.hpp"

namespace ranklab {
namespace {

class ExampleTest : public ::testing::TestWithParam<std::filesystem::path> {};

//! The tools agree on each example: it equals itself, the matrix sums to the p2p traffic,
//! the Perfetto export is valid with a flow per linked message, the HTML has a row per rank.
TEST_P(ExampleTest, EveryToolRuns) {
  const Trace trace = read_trace_file(GetParam());
  EXPECT_TRUE(diff_traces(trace, trace).identical());

  const TraceStats stats = compute_stats(trace);
  EXPECT_EQ(stats.dangling_receives, 0u);
  Traffic matrix_total;
  for (const auto& [pair, traffic] : stats.matrix) {
    matrix_total.count += traffic.count;
    matrix_total.bytes += traffic.bytes;
  }
  Traffic p2p_total;
  for (const auto& [kind, traffic] : stats.group_kinds) {
    p2p_total.count += traffic.p2p.count;
    p2p_total.bytes += traffic.p2p.bytes;
  }
  EXPECT_EQ(matrix_total, p2p_total);

  std::ostringstream perfetto;
  write_perfetto(perfetto, trace);
  const nlohmann::json doc = nlohmann::json::parse(perfetto.str());
  EXPECT_EQ(tools_testing::chrome_trace_problems(doc), std::vector<std::string>{});
  std::size_t flows = 0;
  for (const auto& event : doc["traceEvents"]) flows += event["ph"] == "s" ? 1 : 0;
  EXPECT_EQ(flows, link_messages(trace).links.size());

  EXPECT_EQ(html_report_data(trace, {})["ranks"].size(),
            static_cast<std::size_t>(trace.header.world_size));
}

INSTANTIATE_TEST_SUITE_P(Examples, ExampleTest, ::testing::ValuesIn(tools_testing::example_files()),
                         [](const auto& param_info) {
                           std::string name = param_info.param.stem().string();
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

//! The examples README lists every example file.
TEST(ExamplesReadmeTest, ListsEveryExample) {
  std::ifstream in(tools_testing::examples_dir() / "README.md");
  const std::string readme((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const auto& file : tools_testing::example_files()) {
    EXPECT_NE(readme.find("`" + file.filename().string() + "`"), std::string::npos)
        << file.filename() << " is not in traces/examples/README.md";
  }
}

}  // namespace
}  // namespace ranklab
