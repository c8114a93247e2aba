// The registries of issue 26 §4 (algorithms, trace formats, scheduling policies, the main
// job's element types): every row round-trips through its parse, and the texts derived from
// the rows are the ones the CLI printed when they were written out by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/cluster_flags.hpp"
#include "cli/trace_input_flags.hpp"
#include "cli/train_flags.hpp"
#include "collectives/algorithms/registry.hpp"
#include "emulator/schedule_policies.hpp"
#include "traces/error.hpp"
#include "traces/trace_input.hpp"

namespace ranklab::cli {
namespace {

using ::testing::HasSubstr;

template <typename Call>
std::string usage_error(Call call) {
  try {
    call();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no UsageError)";
}

TEST(AlgorithmRegistryTest, EveryRowRoundTripsThroughItsName) {
  for (const AlgorithmRow& row : algorithm_rows()) {
    EXPECT_EQ(to_string(row.algorithm), row.name);
    EXPECT_EQ(parse_algorithm(row.name), row.algorithm) << row.name;
  }
  EXPECT_EQ(parse_algorithm("recursive_doubling"), Algorithm::recursive_doubling);
  EXPECT_FALSE(parse_algorithm("no-such").has_value());
}

TEST(AlgorithmRegistryTest, AlgoFlagTextsAreTheHandWrittenOnes) {
  EXPECT_EQ(usage_error([] { parse_algorithm_flag("spiral"); }),
            "unknown --algo 'spiral': expected direct, ring, tree, recursive-doubling, "
            "halving-doubling, dissemination or pairwise");
  CLI::App app;
  ClusterFlags flags;
  add_cluster_flags(app, flags);
  EXPECT_THAT(app.help(), HasSubstr("{direct,ring,tree,recursive-doubling,halving-doubling,"
                                    "dissemination,pairwise,mpi}"));
}

TEST(TraceFormatRegistryTest, FormatTextsAreTheHandWrittenOnes) {
  EXPECT_EQ(format_help(),
            "ranklab (JSON Lines), simgrid-ti (SMPI's time-independent trace: its trace.txt, the "
            "folder holding it, or a file of actions), pytorch-fr (PyTorch Flight Recorder dumps, "
            "JSON or pickle: one file per rank, or their folder) or nccl-log (NCCL_DEBUG=INFO logs "
            "with NCCL_DEBUG_SUBSYS=INIT,COLL: one file per process, one interleaved file, or their "
            "folder); with stats only, nccl-ras (what `ncclras` or `ncclras -f json` prints: one or "
            "more snapshots of one job, in the order taken)");
  EXPECT_EQ(trace_format_names(), "ranklab, simgrid-ti, pytorch-fr, nccl-log or nccl-ras");
  CLI::App app;
  std::string format = "ranklab";
  add_format_flag(app, format);
  EXPECT_THAT(app.help(), HasSubstr("{ranklab,simgrid-ti,pytorch-fr,nccl-log,nccl-ras}"));
  EXPECT_THAT(usage_error([] { cli::read_trace_input("otf2", {"t.jsonl"}); }),
              HasSubstr("expected ranklab, simgrid-ti, pytorch-fr, nccl-log or nccl-ras"));
}

TEST(TraceFormatRegistryTest, PathCountsAndStatsOnlyFormats) {
  for (const TraceFormat& format : trace_formats()) {
    EXPECT_EQ(find_trace_format(format.name), &format);
  }
  EXPECT_EQ(find_trace_format("otf2"), nullptr);
  EXPECT_EQ(usage_error([] {
              ranklab::read_trace_input(*find_trace_format("simgrid-ti"), {"a.txt", "b.txt"});
            }),
            "2 paths given, but this format is one trace: a.txt (only --format pytorch-fr and "
            "nccl-log take several files)");
  EXPECT_EQ(usage_error([] { ranklab::read_trace_input(*find_trace_format("ranklab"), {}); }),
            "no trace given");
  EXPECT_EQ(usage_error([] {
              ranklab::read_trace_input(*find_trace_format("nccl-ras"), {"r.txt", "s.txt"});
            }),
            "r.txt: an NCCL RAS snapshot holds each rank's collective counts, not its "
            "operations, so it cannot be replayed, diffed or exported: `ranklab stats --format "
            "nccl-ras r.txt` reports who is behind");
}

TEST(SchedulePolicyRegistryTest, EveryPolicyRoundTrips) {
  for (const std::string text : {"rank-order", "random:7", "pct:3:5", "preempt:2=1,5=0"}) {
    EXPECT_EQ(SchedulePolicy::parse(text).to_string(), text);
  }
  EXPECT_EQ(SchedulePolicy::parse("pct:3").to_string(), "pct:3:3");
  EXPECT_EQ(SchedulePolicy::parse("preempt:").preemptions.size(), 0U);
  for (const std::string bad : {"random", "random:", "pct:", "preempt", "rank-order:1", "fifo"}) {
    EXPECT_EQ(usage_error([&] { SchedulePolicy::parse(bad); }),
              "unknown scheduling policy '" + bad +
                  "': expected rank-order, random:SEED, pct:SEED[:DEPTH] or "
                  "preempt:STEP=RANK,...");
  }
  EXPECT_EQ(schedule_policies().size(), 4U);
}

TEST(SchedulePolicyRegistryTest, PolicyFlagTextsAreTheHandWrittenOnes) {
  CLI::App app;
  ClusterFlags flags;
  add_cluster_flags(app, flags);
  const std::string help = app.help();
  EXPECT_THAT(help, HasSubstr("{rank-order,random:SEED,pct:SEED[:DEPTH],preempt:STEP=RANK,...}"));
  EXPECT_THAT(help, HasSubstr("scheduling policy; preempt (what explore's shrunk: lines print) "
                              "runs rank order but for the listed ranks at the listed "
                              "scheduling steps"));
}

TEST(TrainDataTypeTest, ShortAndLongNames) {
  EXPECT_EQ(parse_train_dtype("f32"), DataType::f32);
  EXPECT_EQ(parse_train_dtype("float32"), DataType::f32);
  EXPECT_EQ(parse_train_dtype("f64"), DataType::f64);
  EXPECT_EQ(parse_train_dtype("float64"), DataType::f64);
  EXPECT_EQ(long_name(DataType::f32), "float32");
  EXPECT_EQ(long_name(DataType::f64), "float64");
  EXPECT_EQ(usage_error([] { parse_train_dtype("bf16"); }),
            "unknown --dtype 'bf16': expected f32 or f64");
}

}  // namespace
}  // namespace ranklab::cli
