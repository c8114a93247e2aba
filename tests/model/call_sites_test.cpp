// Traces and reports name the model's line that made a communication happen, not the helper
// that makes the call (issue 28 §3), as a PyTorch user's report names their script's line:
// the TP and SP collectives of a layer's hooks are recorded at dense_forward's or
// dense_backward's line, a stage edge's SP all_gather at the pipeline's forward or backward,
// the DP all_reduces where the step averages the gradients; and a helper called directly
// records its caller's line. The labels still say what each call is for.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <regex>
#include <source_location>
#include <string>
#include <string_view>
#include <vector>

#include "comm/call_site.hpp"
#include "model/data_parallel.hpp"
#include "model/problem.hpp"
#include "model/sequence_parallel.hpp"
#include "model/tensor_parallel.hpp"
#include "tests/model/parallel_test_support.hpp"

namespace ranklab {
namespace {

// The helpers that communicate on a caller's behalf: no recorded site may name them.
bool is_helper_file(std::string_view file) {
  return file == "model/tensor_parallel.cpp" || file == "model/sequence_parallel.cpp" ||
         file == "model/data_parallel.cpp";
}

struct ExpectedSite {
  std::string_view file;
  std::string_view function;
};

// Where the call its label names must be recorded; nullopt for a label of no helper.
std::optional<ExpectedSite> expected_site(const std::string& label) {
  static const std::regex layer_call(
      R"((TP all_reduce|SP reduce_scatter|SP all_gather) of layer \d+ (forward|backward), .*)");
  static const std::regex stage_edge(R"((forward|backward) of micro-batch \d+ chunk \d+.*)");
  std::smatch m;
  if (std::regex_match(label, m, layer_call)) {
    return ExpectedSite{"model/dense_model.cpp",
                        m[2] == "forward" ? "dense_forward" : "dense_backward"};
  }
  if (std::regex_match(label, m, stage_edge)) {  // under sp: full_rows' all_gather
    return ExpectedSite{"model/pipeline_step.cpp", m[1] == "forward" ? "forward" : "backward"};
  }
  if (label.starts_with("DP all_reduce")) return ExpectedSite{"model/pipeline_step.cpp", "run_schedule"};
  return std::nullopt;
}

struct SiteCase {
  std::string name;
  StepOptions step;
};

class ModelCallSitesTest : public ::testing::TestWithParam<SiteCase> {};

//! Every TP, SP and DP call of a TP2 x PP2 x DP2 step is recorded at the model's line that
//! triggered it, with the function and the label of what it is for; none at a helper's.
TEST_P(ModelCallSitesTest, NameTheModelLineNotTheHelper) {
  const ModelShape shape{.batch = 4, .seq = 2, .hidden = 4, .inter = 8, .layers = 4};
  const ParallelConfig config{.tp = 2, .pp = 2, .dp = 2};
  const Problem<double> problem = make_problem<double>(shape, config.dp, 5);
  const auto run = testing::run_job<double>(config, problem, {.step = GetParam().step});
  ASSERT_TRUE(testing::run_ok(run.report));
  int layer_calls = 0;
  int dp_calls = 0;
  for (std::size_t rank = 0; rank < run.trace.ranks.size(); ++rank) {
    for (const TraceEvent& e : run.trace.ranks[rank]) {
      const CallSite& site = e.site;
      const std::string where = fmt::format("rank {}, op {} at {}:{} ({}) for \"{}\"", rank,
                                            e.rank_seq, site.file, site.line, site.function,
                                            site.label);
      EXPECT_FALSE(is_helper_file(site.file)) << where;
      const std::optional<ExpectedSite> expected = expected_site(site.label);
      if (!expected) continue;
      EXPECT_EQ(site.file, expected->file) << where;
      EXPECT_EQ(site.function, expected->function) << where;
      EXPECT_GT(site.line, 0u) << where;
      layer_calls += expected->file == "model/dense_model.cpp" ? 1 : 0;
      dp_calls += site.label.starts_with("DP all_reduce") ? 1 : 0;
    }
  }
  EXPECT_GT(layer_calls, 0);
  EXPECT_EQ(dp_calls, 8 * 2 * 4);  // 8 ranks x 2 local layers x 4 parameters
}

INSTANTIATE_TEST_SUITE_P(
    Steps, ModelCallSitesTest,
    ::testing::Values(SiteCase{"seed", {}},
                      SiteCase{"sp_onefoneb_m2", {.schedule = ScheduleKind::one_f_one_b,
                                                  .microbatches = 2,
                                                  .tp_comm = TpComm::sequence_parallel}}),
    [](const auto& param_info) { return param_info.param.name; });

//! Each helper called directly records the line of the call, in the caller's file.
TEST(HelperCallSitesTest, RecordTheCallersLine) {
  ClusterOptions options;
  options.world_size = 2;
  auto sink = std::make_shared<MemorySink>();
  options.trace_sink = sink;
  std::vector<std::uint32_t> lines;  // written by rank 0 only
  const RunReport report = testing::run_ranks(options, [&](Communicator& world) {
    const auto mark = [&](std::source_location here = std::source_location::current()) {
      if (world.rank() == 0) lines.push_back(here.line() + 1);  // the next line's call
    };
    Matrix<float> values = Matrix<float>::Ones(4, 2);
    mark();
    all_reduce_sum<float>(world, values);
    const SequenceSplit split{.seq = 4, .tp = 2};
    mark();
    reduce_scatter_sequence<float>(world, split, values);
    mark();
    all_gather_sequence<float>(world, split, values, values);
    std::vector<LayerGrads<float>> grads(1, LayerGrads<float>::zeros(2, 2));
    mark();
    average_gradients<float>(world, grads);
  });
  ASSERT_TRUE(testing::run_ok(report));
  const std::string_view file = relative_source_path(std::source_location::current().file_name());
  const std::vector<TraceEvent>& events = sink->trace().ranks.at(0);
  // One all_reduce, reduce_scatter and all_gather, then average_gradients' four all_reduces.
  ASSERT_EQ(events.size(), 7u);
  ASSERT_EQ(lines.size(), 4u);
  for (std::size_t i = 0; i < events.size(); ++i) {
    const std::uint32_t line = lines[std::min<std::size_t>(i, 3)];
    EXPECT_EQ(events[i].site->file, file) << "op " << i;
    EXPECT_EQ(events[i].site->line, line) << "op " << i;
  }
}

}  // namespace
}  // namespace ranklab
