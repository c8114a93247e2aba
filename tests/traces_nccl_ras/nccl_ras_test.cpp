// The NCCL RAS snapshot readers on text written here and on the shipped examples: the text
// form's table, MISMATCH, INCOMPLETE, ERROR and status sections as NCCL 2.30.7 prints them, the
// JSON form's fields; both forms of one job read to the same evidence; the verdict's words;
// several snapshots (stuck or moving); and the one-line errors "FILE:LINE: reason".
#include "traces/nccl_ras.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tests/support/expect_throw_msg.hpp"
#include "traces/error.hpp"
#include "traces/nccl_ras_verdict.hpp"

namespace ranklab {
namespace {

std::filesystem::path examples() {
  return std::filesystem::path(RANKLAB_SOURCE_DIR) / "traces" / "examples" / "nccl_ras";
}

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

RasSnapshot example(const std::string& name) {
  const std::filesystem::path path = examples() / name;
  return parse_nccl_ras(name, read(path));
}

/// A text snapshot: NCCL 2.30.7's table with the given rows, then the Errors and Warnings
/// sections' bodies.
std::string text(const std::string& rows, const std::string& errors, const std::string& warnings) {
  return "NCCL version 2.30.7 compiled with CUDA 13.0\n"
         "CUDA runtime version 13000, driver version 13000\n\n"
         "Job summary\n===========\n\n"
         "  Nodes  Processes         GPUs  Processes     GPUs\n"
         "(total)   per node  per process    (total)  (total)\n"
         "      4          8            1         32       32\n\n"
         "Communicators... (0.00s)\n=============\n\n"
         "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n"
         "    #  in group  per comm  per node  per comm  in group\n" +
         rows + "\nErrors\n======\n\n" + errors + "Warnings\n========\n\n" + warnings;
}

const std::string kRow32 = "    0         1         4         8        32        32   RUNNING  MISMATCH\n";

//! The ras.rst sample of a 32-rank communicator where 6 ranks are one operation behind: the
//! outliers are named, the other 26 are the communicator's remaining ranks.
TEST(NcclRasTextTest, CountMismatchNamesOutliersAndTheRest) {
  const RasSnapshot s = parse_nccl_ras(
      "ras.txt",
      text(kRow32, "",
           "#0-0 (27a079b828ff1a75) MISMATCH\n"
           "  Communicator ranks have different AllReduce operation counts\n"
           "  26 ranks have launched up to operation 6650\n"
           "  6 ranks have launched up to operation 6649\n"
           "  Rank 0 -- GPU 0 managed by process 483072 on node 172.16.64.210\n"
           "  Rank 2 -- GPU 2 managed by process 483074 on node 172.16.64.210\n"
           "  Rank 3 -- GPU 3 managed by process 483075 on node 172.16.64.210\n"
           "  Rank 4 -- GPU 4 managed by process 483076 on node 172.16.64.210\n"
           "  Rank 5 -- GPU 5 managed by process 483077 on node 172.16.64.210\n"
           "  Rank 7 -- GPU 7 managed by process 483079 on node 172.16.64.210\n\n"));
  EXPECT_EQ(s.form, "text");
  EXPECT_EQ(s.nccl_version, "2.30.7");
  ASSERT_EQ(s.communicators.size(), 1u);
  const RasCommunicator& comm = s.communicators[0];
  EXPECT_EQ(comm.label, "#0-0");
  EXPECT_EQ(comm.hash, "27a079b828ff1a75");
  EXPECT_EQ(comm.size, 32);
  EXPECT_EQ(comm.line, 24);
  ASSERT_EQ(comm.splits.size(), 1u);
  EXPECT_EQ(ras_collective_name(comm.splits[0].kind), "all_reduce");
  ASSERT_EQ(comm.splits[0].groups.size(), 2u);
  EXPECT_EQ(comm.splits[0].groups[0].launched, 6650u);
  EXPECT_EQ(comm.splits[0].groups[0].ranks.count, 26);
  EXPECT_EQ(comm.splits[0].groups[1].ranks.ranks, (std::vector<int>{0, 2, 3, 4, 5, 7}));
  EXPECT_EQ(describe_ranks(comm.splits[0].groups[0].ranks), "ranks 1, 6, 8-31");
  const RasVerdict v = judge_ras({s});
  EXPECT_EQ(v.status, "behind");
  EXPECT_EQ(v.headline, "behind: on communicator 27a079b828ff1a75, ranks 0, 2-5, 7 stopped at "
                        "all_reduce count 6649 while ranks 1, 6, 8-31 reached 6650");
}

//! One rank is named on its count's line; a group that never launched is count 0; several
//! kinds of collective differ at once; status and error sections become notes.
TEST(NcclRasTextTest, SingleRanksZeroCountsStatusAndErrors) {
  const RasSnapshot s = parse_nccl_ras(
      "ras.txt",
      text("    0         1         1         4         4         4   RUNNING  ERROR,MISMATCH\n",
           "#0-0 (00000000000000ab) ERROR\n"
           "  Asynchronous error on 1 rank\n"
           "  Rank 3 reported Remote process error -- GPU 3 managed by process 9 on node h\n\n",
           "#0-0 (00000000000000ab) MISMATCH\n"
           "  Communicator ranks have different status\n"
           "  3 ranks have status RUNNING\n"
           "  Rank 3 has status FINALIZE -- GPU 3 managed by process 9 on node h\n"
           "  Communicator ranks have different Broadcast operation counts\n"
           "  3 ranks have launched up to operation 2\n"
           "  Rank 1 has not launched any operations -- GPU 1 (NVML 5) managed by process 7 on node h\n\n"
           "  Communicator ranks have different AllGather operation counts\n"
           "  2 ranks have launched up to operation 4\n"
           "  2 ranks have launched up to operation 3\n\n"));
  const RasCommunicator& comm = s.communicators.at(0);
  ASSERT_EQ(comm.splits.size(), 2u);
  EXPECT_EQ(comm.splits[0].groups[1].launched, 0u);
  EXPECT_EQ(comm.splits[0].groups[0].ranks.ranks, (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(comm.splits[1].groups[1].ranks.ranks, std::vector<int>{});  // 2 of 4: not named
  const RasVerdict v = judge_ras({s});
  const std::vector<std::string>& lines = v.communicators.at(0).lines;
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_EQ(lines[0], "rank 1 launched no broadcast while ranks 0, 2, 3 reached 2");
  EXPECT_EQ(lines[1], "rank 1 is process 7 on node h (GPU 1)");  // the CUDA device, not NVML's
  EXPECT_EQ(lines[2], "2 ranks stopped at all_gather count 3 while 2 ranks reached 4");
  EXPECT_EQ(lines[3], "rank 3 reports an asynchronous error: Remote process error");
  EXPECT_EQ(lines[4], "3 ranks have status RUNNING");
  EXPECT_EQ(lines[5], "rank 3 has status FINALIZE");
}

//! The missing ranks of a communicator and the job's dead processes.
TEST(NcclRasTextTest, MissingRanksAndDeadProcesses) {
  const RasSnapshot s = parse_nccl_ras(
      "ras.txt",
      text("    0         1         4       7-8        32        32   RUNNING  INCOMPLETE\n",
           "DEAD\n  1 job process is considered dead (unreachable via the RAS network)\n"
           "  Process 3487984 on node 172.16.64.213 managing GPU 5\n\n"
           "#0-0 (cf264af53edbe986) INCOMPLETE\n  Missing communicator data from 1 rank\n"
           "  Rank 21 -- GPU 5 managed by process 3487984 on node 172.16.64.213\n\n",
           "TIMEOUT\n  Encountered 2 communication timeouts while gathering communicator data\n\n"));
  const RasCommunicator& comm = s.communicators.at(0);
  EXPECT_EQ(comm.missing_count, 1);
  ASSERT_EQ(comm.missing.size(), 1u);
  EXPECT_EQ(comm.missing[0].rank, 21);
  EXPECT_EQ(comm.missing[0].pid, 3487984);
  EXPECT_TRUE(comm.missing[0].dead);
  EXPECT_EQ(s.timeouts, 2);
  ASSERT_EQ(s.processes_missing.size(), 1u);
  EXPECT_TRUE(s.processes_missing[0].dead);
  const RasVerdict v = judge_ras({s});
  EXPECT_EQ(v.status, "missing ranks");
  EXPECT_EQ(v.headline, "missing ranks: on communicator cf264af53edbe986, rank 21 is missing: its "
                        "process 3487984 on node 172.16.64.213 (GPU 5) is considered dead "
                        "(unreachable for 60 s)");
}

/// `text` with its first `from` (after `after`) replaced by `to`.
std::string edited(std::string text, const std::string& after, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from, text.find(after));
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

//! JSON statuses: a missing rank whose process answered (it left the communicator), one
//! considered dead; a rank finalizing, one still initializing, one failed to initialize.
TEST(NcclRasJsonTest, StatusesOfMissingAndAnsweringRanks) {
  std::string json = read(examples() / "missing_rank" / "ras.json");
  json = edited(json, "\"missing_ranks\": [\n        {", "\"unresponsive\": true", "\"unresponsive\": false");
  // NCCL writes the hash unpadded in JSON ("0x%lx"); ranklab pads it as the text does.
  json = edited(json, "\"0xd3f5c2a11b04e96\"", "\"considered_dead\": false", "\"considered_dead\": true");
  json = edited(json, "\"rank\": 1,", "\"finalize_called\": false", "\"finalize_called\": true");
  json = edited(json, "\"rank\": 2,", "\"init_state\": 0", "\"init_state\": 7");
  json = edited(json, "\"rank\": 3,", "\"init_state\": 0", "\"init_state\": 3");
  const RasSnapshot s = parse_nccl_ras("ras.json", json);
  const RasVerdict v = judge_ras({s});
  const std::vector<std::string>& world = v.communicators.at(0).lines;
  const auto holds = [](const std::vector<std::string>& lines, const std::string& line) {
    return std::find(lines.begin(), lines.end(), line) != lines.end();
  };
  EXPECT_TRUE(holds(world, "rank 6 is missing: its process 4106 on node 10.0.0.2 (GPU 2) answered "
                           "but no longer holds the communicator (destroyed or aborted it)"));
  EXPECT_TRUE(holds(world, "rank 1 has status FINALIZE"));
  EXPECT_TRUE(holds(world, "ranks 2, 3 have status INIT"));  // 7 is ncclInProgress: no error
  EXPECT_TRUE(holds(world, "rank 3 reports an initialization error: Internal error"));
  EXPECT_EQ(v.communicators.at(0).state, "missing ranks, errors");
  EXPECT_TRUE(holds(v.communicators.at(2).lines, "rank 2 is missing: its process 4106 on node "
                                                 "10.0.0.2 (GPU 2) is considered dead (unreachable for 60 s)"));
  EXPECT_EQ(v.status, "missing ranks, errors");
}

//! The two forms of each example job read to the same evidence, where the text form shows it:
//! the same splits (named alike where the text names them) and the same missing ranks.
TEST(NcclRasExamplesTest, TextAndJsonAgree) {
  for (const char* name : {"healthy", "rank_behind", "node_behind", "missing_rank", "async_error"}) {
    SCOPED_TRACE(name);
    const RasSnapshot t = example(std::string(name) + "/ras.txt");
    const RasSnapshot j = example(std::string(name) + "/ras.json");
    EXPECT_EQ(j.form, "json");
    EXPECT_EQ(j.nccl_version, "2.30.7");
    EXPECT_EQ(t.communicators.size() + static_cast<std::size_t>(t.unnamed_in_step), j.communicators.size());
    for (const RasCommunicator& tc : t.communicators) {
      const auto jc = std::find_if(j.communicators.begin(), j.communicators.end(),
                                   [&](const RasCommunicator& c) { return c.hash == tc.hash; });
      ASSERT_NE(jc, j.communicators.end()) << tc.hash;
      EXPECT_EQ(tc.size, jc->size);
      EXPECT_EQ(tc.missing, jc->missing);
      for (const RasRankProcess& p : tc.processes) {  // the text names some; JSON all
        EXPECT_NE(std::find(jc->processes.begin(), jc->processes.end(), p), jc->processes.end()) << p.rank;
      }
      ASSERT_EQ(tc.splits.size(), jc->splits.size());
      for (std::size_t k = 0; k < tc.splits.size(); ++k) {
        ASSERT_EQ(tc.splits[k].groups.size(), jc->splits[k].groups.size());
        for (std::size_t g = 0; g < tc.splits[k].groups.size(); ++g) {
          const RasCountGroup& a = tc.splits[k].groups[g];
          const RasCountGroup& b = jc->splits[k].groups[g];
          EXPECT_EQ(a.launched, b.launched);
          EXPECT_EQ(a.ranks.count, b.ranks.count);
          if (!a.ranks.ranks.empty()) {
            EXPECT_EQ(a.ranks.ranks, b.ranks.ranks);
          }
        }
      }
    }
  }
}

//! Two snapshots: a communicator whose counts did not move is stuck; one whose counts moved is
//! not; with one snapshot the verdict says it cannot tell.
TEST(NcclRasVerdictTest, StuckOrMovingAcrossSnapshots) {
  const RasSnapshot behind = example("rank_behind/ras.json");
  const RasSnapshot healthy = example("healthy/ras.json");
  const RasVerdict one = judge_ras({behind});
  EXPECT_FALSE(one.communicators.at(0).moved.has_value());
  ASSERT_FALSE(one.notes.empty());
  EXPECT_NE(one.notes.back().find("counts that do not move are a hang"), std::string::npos);

  const RasVerdict stuck = judge_ras({behind, behind});
  EXPECT_EQ(stuck.communicators.at(0).moved, false);
  EXPECT_TRUE(stuck.headline.starts_with("stuck, behind: on communicator 27a079b828ff1a75, rank 5"))
      << stuck.headline;

  const RasVerdict moved = judge_ras({healthy, behind});
  EXPECT_EQ(moved.communicators.at(0).moved, true);
  EXPECT_EQ(moved.communicators.at(1).moved, false);
  EXPECT_TRUE(moved.headline.starts_with("behind: ")) << moved.headline;
}

//! Bad input: one line naming the file and the line, text and JSON alike.
TEST(NcclRasErrorsTest, MalformedLinesNameFileAndLine) {
  // Text: a count that is not a number, a count line before its collective, an unknown kind.
  EXPECT_THROW_MSG(parse_nccl_ras("r.txt", text(kRow32, "", "#0-0 (27a079b828ff1a75) MISMATCH\n"
                                                           "  Communicator ranks have different AllReduce operation counts\n"
                                                           "  x ranks have launched up to operation 1\n")),
                   TraceError, "r.txt:26: expected 'Rank ' at 'x ranks");
  EXPECT_THROW_MSG(parse_nccl_ras("r.txt", text(kRow32, "", "#0-0 (27a079b828ff1a75) MISMATCH\n"
                                                           "  2 ranks have launched up to operation 1\n")),
                   TraceError, "r.txt:25: a count line before 'Communicator ranks have different");
  EXPECT_THROW_MSG(parse_nccl_ras("r.txt", text(kRow32, "", "#0-0 (27a079b828ff1a75) MISMATCH\n"
                                                           "  Communicator ranks have different AllToAll operation counts\n")),
                   TraceError, "r.txt:25: unknown collective 'AllToAll'");
  EXPECT_THROW_MSG(parse_nccl_ras("r.txt", text(kRow32, "", "#3-0 (27a079b828ff1a75) MISMATCH\n")),
                   TraceError, "r.txt:24: #3-0: the table has no group 3");
  EXPECT_THROW_MSG(parse_nccl_ras("r.txt", text(kRow32, "", "#0-0 (27a079b828ff1a75) INCOMPLETE\n")),
                   TraceError, "r.txt:24: unknown Warnings kind 'INCOMPLETE'");
  // Found by the fuzzer: a host name of bytes no report can carry (NCCL prints ASCII).
  EXPECT_THROW_MSG(parse_nccl_ras("r.txt", text(kRow32, "#0-0 (27a079b828ff1a75) INCOMPLETE\n"
                                                         "  Rank 1 -- GPU 0 managed by process 1 on node \xff\n", "")),
                   TraceError, "r.txt:22: a byte outside printable ASCII ('\xff')");
  // Found by the fuzzer: a negative comms count (it sized a vector), a collective "with
  // different counts" that lists one (the verdict took the first of no lines), more missing
  // ranks named than counted.
  EXPECT_THROW_MSG(parse_nccl_ras("r.txt", text("    0        -1         4         8        32        32   RUNNING      OK\n", "", "")),
                   TraceError, "r.txt:16: a table row needs numbers (1 or more)");
  EXPECT_THROW_MSG(parse_nccl_ras("r.txt", text(kRow32, "", "#0-0 (27a079b828ff1a75) MISMATCH\n"
                                                           "  Communicator ranks have different AllReduce operation counts\n"
                                                           "  32 ranks have launched up to operation 1\n")),
                   TraceError, "r.txt:25: the AllReduce counts of #0-0 list 1 count: RAS lists two or more");
  EXPECT_THROW_MSG(parse_nccl_ras("r.txt", text(kRow32, "#0-0 (27a079b828ff1a75) INCOMPLETE\n"
                                                         "  Missing communicator data from 1 rank\n"
                                                         "  Rank 1 -- [process information not found]\n"
                                                         "  Rank 2 -- [process information not found]\n", "")),
                   TraceError, "r.txt:24: more missing ranks named than 'Missing communicator data from 1' counts");
  EXPECT_THROW_MSG(parse_nccl_ras("r.txt", "hello\n"), TraceError,
                   "r.txt: no 'Communicators...' table: not what ncclras prints");

  // JSON: the line of the field at fault, or of the object without it.
  const std::string good = read(examples() / "rank_behind" / "ras.json");
  std::string bad_count = good;
  bad_count.replace(bad_count.find("\"AllReduce\": 18"), 15, "\"AllReduce\": -1");
  EXPECT_THROW_MSG(parse_nccl_ras("r.json", bad_count), TraceError,
                   "r.json:33: field 'AllReduce' must be a non-negative integer, got -1");
  std::string no_rank = good;
  no_rank.replace(no_rank.find("\"rank\": 0,"), 10, "\"rang\": 0,");
  EXPECT_THROW_MSG(parse_nccl_ras("r.json", no_rank), TraceError,
                   "r.json:15: missing required field 'rank'");
  std::string twice = good;
  twice.replace(twice.find("\"rank\": 1,"), 10, "\"rank\": 0,");
  EXPECT_THROW_MSG(parse_nccl_ras("r.json", twice), TraceError, "r.json:37: rank 0 listed twice");
  EXPECT_THROW_MSG(parse_nccl_ras("r.json", "{\n  \"nccl_version\": \"2.30.7\",\n  oops\n}\n"),
                   TraceError, "r.json:3: invalid JSON: syntax error");
  // Found by the fuzzer: a number beyond a double is nlohmann's out_of_range, not parse_error.
  std::string overflow = good;
  overflow.replace(overflow.find("\"AllReduce\": 18"), 15, "\"AllReduce\": 1e999");
  EXPECT_THROW_MSG(parse_nccl_ras("r.json", overflow), TraceError,
                   "r.json:33: invalid JSON: number overflow parsing '1e999'");
  EXPECT_THROW_MSG(parse_nccl_ras("r.json", "{\"nccl_version\": \"2.30.7\"}"), TraceError,
                   "r.json:1: missing required field 'communicators'");
}

}  // namespace
}  // namespace ranklab
