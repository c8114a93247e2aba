// The processes of an MPI job compare their flags before they run (cli/flags_given.hpp):
// processes that disagreed on --trace waited for each other forever (issue 28 §4). Here the
// flags come from `ranklab run`'s own parser, one command line per rank.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/flags_given.hpp"
#include "cli/run_command.hpp"

namespace ranklab::cli {
namespace {

// `ranklab run ARGS...` parsed as main() parses it: the flags it gave.
FlagsGiven given(std::vector<std::string> args) {
  CLI::App app;
  RunFlags flags;
  add_run_command(app, flags);
  args.insert(args.begin(), "run");
  std::reverse(args.begin(), args.end());  // CLI11 parses a vector from its back
  app.parse(args);
  return flags.given;
}

std::string disagreement(const std::vector<std::vector<std::string>>& by_rank) {
  std::vector<FlagsGiven> flags;
  for (const auto& args : by_rank) flags.push_back(decode_flags(encode_flags(given(args))));
  return flags_disagreement(flags);
}

TEST(FlagsGivenTest, OptionsWithTheirValuesAndFlagsAlone) {
  const FlagsGiven flags =
      given({"--backend", "mpi", "--scenario", "ring", "--no-trace", "--timeout-ms", "1000"});
  const FlagsGiven want = {{"--scenario", "ring"},
                           {"--backend", "mpi"},
                           {"--timeout-ms", "1000"},
                           {"--no-trace", ""}};
  EXPECT_EQ(flags, want);
}

TEST(FlagsGivenTest, TheSameFlagsAgreeInAnyOrder) {
  EXPECT_EQ(disagreement({{"--backend", "mpi", "--scenario", "ring", "--count", "4"},
                          {"--scenario", "ring", "--count", "4", "--backend", "mpi"},
                          {"--backend", "mpi", "--scenario", "ring", "--count", "4"}}),
            "");
}

//! The job: `-np 1 ... --trace t.jsonl : -np 1 ... --no-trace` hung.
TEST(FlagsGivenTest, TraceOnOneProcessOnlyNamesTheFlagAndTheRanks) {
  EXPECT_EQ(disagreement({{"--backend", "mpi", "--scenario", "ring", "--trace", "t.jsonl"},
                          {"--backend", "mpi", "--scenario", "ring", "--no-trace"}}),
            "the MPI processes were given different flags: --trace t.jsonl on rank 0; no "
            "--trace on rank 1 (start every process with the same flags)");
}

TEST(FlagsGivenTest, EachValueWithItsRanks) {
  EXPECT_EQ(disagreement({{"--scenario", "ring", "--count", "4"},
                          {"--scenario", "ring", "--count", "8"},
                          {"--scenario", "ring", "--count", "4"},
                          {"--scenario", "ring"},
                          {"--scenario", "ring", "--count", "8"}}),
            "the MPI processes were given different flags: --count 4 on ranks 0 and 2; "
            "--count 8 on ranks 1 and 4; no --count on rank 3 (start every process with the "
            "same flags)");
  EXPECT_EQ(disagreement({{"--check-collectives"}, {}, {}}),
            "the MPI processes were given different flags: --check-collectives on rank 0; no "
            "--check-collectives on ranks 1 and 2 (start every process with the same flags)");
}

}  // namespace
}  // namespace ranklab::cli
