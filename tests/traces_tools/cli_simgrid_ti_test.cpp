// `ranklab replay --format simgrid-ti` on the bugs of small MPI programs, written as TI
// actions: each replays into the report it deserves (exit 3 deadlock, 4 mismatch), and the
// correct programs that used to raise false alarms replay cleanly (exit 0).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/temp_dir.hpp"
#include "tests/traces_tools/run_command.hpp"
#include "tests/traces_tools/tools_support.hpp"

namespace ranklab {
namespace {

using tools_testing::CommandResult;
using tools_testing::shell_quoted;
using tools_testing::without_timing;

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class CliSimgridTiTest : public ::testing::Test {
 protected:
  /// Writes `actions` (one-file format) as NAME.txt and replays it.
  CommandResult replay(const std::string& name, const std::string& actions,
                       const std::string& flags = "") {
    const auto path = dir_ / (name + ".txt");
    std::ofstream(path) << actions;
    return tools_testing::run_ranklab("replay --format simgrid-ti " + shell_quoted(path) + " " +
                                      flags);
  }
  testing::TempDir dir_{"ranklab_cli_ti"};
};

//! A ranklab trace given as a TI trace is refused as what it is: the JSON header was read
//! as an index line and echoed whole as a file name (issue 28 §3). An index line that is
//! more than a file name is refused at its line.
TEST_F(CliSimgridTiTest, JsonOrWordyIndexIsNotATiTrace) {
  const std::string jsonl = shell_quoted(tools_testing::examples_dir() / "allreduce_ring_w4.jsonl");
  for (const char* command : {"stats", "replay"}) {
    const CommandResult r =
        tools_testing::run_ranklab(std::string(command) + " --format simgrid-ti " + jsonl);
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_TRUE(has(r.err, "allreduce_ring_w4.jsonl: a JSON document, not a SimGrid "
                           "time-independent trace (a ranklab trace is read with --format "
                           "ranklab)\n"))
        << r.err;
    EXPECT_FALSE(has(r.err, "world_size")) << r.err;
  }
  const auto index = dir_ / "trace.txt";
  std::ofstream(index) << "rank-0.txt\nrank 1 file.txt\n";
  std::ofstream(dir_ / "rank-0.txt") << "0 init\n";
  const CommandResult r =
      tools_testing::run_ranklab("replay --format simgrid-ti " + shell_quoted(index));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.err, "trace.txt:2: expected 'RANK ACTION ...' or, in an index, one file "
                         "name, got 3 words starting 'rank'"))
      << r.err;
}

//! A send nobody receives, which its rank went on past (SMPI buffered it): under rendezvous
//! the send never completes, and the culprit names it with its line.
TEST_F(CliSimgridTiTest, MissingReceiveIsALostMessage) {
  const CommandResult r =
      replay("lost", "0 init\n1 init\n0 send 1 5 4 1\n0 finalize\n1 finalize\n");
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_TRUE(has(r.out,
                  "culprit (lost-message): rank 0 waits in op #0, its send of 4 x i32 to "
                  "rank 1 tag 5 at "))
      << r.out;
  EXPECT_TRUE(has(r.out, "lost.txt:3, which no receive of the recording takes")) << r.out;
}

//! A receive with the wrong tag: the sender went on, the receiver is stuck; the replay's
//! deadlock names both tags.
TEST_F(CliSimgridTiTest, WrongTagDeadlocks) {
  const CommandResult r = replay("tag", "0 send 1 5 4 1\n0 finalize\n1 recv 0 6 4 1\n");
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "culprit (tag-mismatch): rank 1 waits in recv from rank 0 tag 6"))
      << r.out;
  EXPECT_TRUE(has(r.out, "rank 0 sent it tag 5 instead")) << r.out;
}

//! A reduce rank 2 never enters: rank 1 went past it (not the root), rank 0 waits in it.
TEST_F(CliSimgridTiTest, MissingCollectiveIsAMissingParticipant) {
  const CommandResult r =
      replay("reduce", "0 reduce 4 0 0 1\n1 reduce 4 0 0 1\n1 finalize\n2 finalize\n");
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "culprit (missing-participant): rank 2 returned while")) << r.out;
  EXPECT_TRUE(has(r.out, "in reduce #0")) << r.out;
}

//! The receive's own count and type meet the send's: fewer elements or another type is a
//! message mismatch naming both calls (exit 4); more elements is MPI's right.
TEST_F(CliSimgridTiTest, ReceiveSignaturesAreCompared) {
  const CommandResult small = replay("small", "0 send 1 0 5000 1\n1 recv 0 0 1000 1\n");
  EXPECT_EQ(small.exit_code, 4) << small.out << small.err;
  EXPECT_TRUE(has(small.out,
                  "rank 0 (op #0) sends 5000 x i32 to rank 1 tag 0; rank 1 (op #0) "
                  "receives into 1000 x i32 from rank 0 tag 0: the receive buffer is "
                  "smaller than the message"))
      << small.out;
  const CommandResult type = replay("type", "0 send 1 0 4 1\n1 recv 0 0 4 0\n");
  EXPECT_EQ(type.exit_code, 4) << type.out << type.err;
  EXPECT_TRUE(has(type.out, "receives into 4 x f64 from rank 0 tag 0: the element types differ"))
      << type.out;
  const CommandResult large = replay("large", "0 send 1 0 1000 1\n1 recv 0 0 5000 1\n");
  EXPECT_EQ(large.exit_code, 0) << large.out << large.err;
}

//! Types that ranklab's element types cannot tell apart but SMPI's names do: an integer
//! type sent and one of the other signedness received is a message mismatch naming both
//! MPI types and lines (exit 4); alike types, and MPI_CHAR (its signedness the compiler's),
//! are not. Counts of every type are in elements (SMPI 3.29 on), so a short MPI_UNSIGNED
//! receive is a short receive.
TEST_F(CliSimgridTiTest, SignednessIsATypeMismatch) {
  const CommandResult unsigned_int = replay("ui", "0 send 1 0 4 11\n1 recv 0 0 4 1\n");
  EXPECT_EQ(unsigned_int.exit_code, 4) << unsigned_int.out << unsigned_int.err;
  EXPECT_TRUE(has(unsigned_int.out,
                  "culprit (message-mismatch): message mismatch in world: rank 0 (op #0) sends 4 "
                  "x MPI_UNSIGNED to rank 1 tag 0 at "))
      << unsigned_int.out;
  EXPECT_TRUE(has(unsigned_int.out,
                  "ui.txt:1; rank 1 (op #0) receives it into 4 x MPI_INT at "))
      << unsigned_int.out;
  EXPECT_TRUE(has(unsigned_int.out,
                  "ui.txt:2: the element types differ in signedness (unsigned against signed)"))
      << unsigned_int.out;
  EXPECT_TRUE(has(unsigned_int.out, "messages whose types differ (1): as the recording gives "
                                    "both calls\n"))
      << unsigned_int.out;
  const CommandResult long_unsigned = replay("lu", "0 isend 1 3 2 4\n0 wait 0 1 3\n"
                                                   "1 irecv 0 3 2 12\n1 waitall\n");
  EXPECT_EQ(long_unsigned.exit_code, 4) << long_unsigned.out << long_unsigned.err;
  EXPECT_TRUE(has(long_unsigned.out, "sends 2 x MPI_LONG to rank 1 tag 3 at ")) << long_unsigned.out;
  EXPECT_TRUE(has(long_unsigned.out, "(signed against unsigned)")) << long_unsigned.out;
  const CommandResult json = replay("ui_json", "0 send 1 0 4 11\n1 recv 0 0 4 1\n", "--json");
  EXPECT_EQ(json.exit_code, 4) << json.err;
  EXPECT_TRUE(has(json.out, "\"type_mismatches\": [")) << json.out;
  EXPECT_TRUE(has(json.out, "\"kind\": \"message-mismatch\"")) << json.out;
  for (const char* alike : {"0 send 1 0 4 11\n1 recv 0 0 4 11\n", "0 send 1 0 4 2\n1 recv 0 0 4 9\n",
                            "0 send 1 0 4 1\n1 recv 0 0 4 19\n"}) {
    const CommandResult r = replay("alike", alike);
    EXPECT_EQ(r.exit_code, 0) << alike << r.out << r.err;
    EXPECT_FALSE(has(r.out, "types differ")) << r.out;
  }
  const CommandResult short_unsigned = replay("su", "0 send 1 0 1000 11\n1 recv 0 0 300 11\n");
  EXPECT_EQ(short_unsigned.exit_code, 4) << short_unsigned.out << short_unsigned.err;
  EXPECT_TRUE(has(short_unsigned.out,
                  "sends 1000 x i32 to rank 1 tag 0; rank 1 (op #0) receives into 300 x i32"))
      << short_unsigned.out;
}

//! A gatherv whose root expects 1 element from rank 1, which sends 2: the message mismatch.
TEST_F(CliSimgridTiTest, VCollectiveCountsAreCompared) {
  const CommandResult r = replay("gatherv", "0 gatherv 1 1 1 0 1 1\n1 gatherv 2 0 0 0 1 1\n");
  EXPECT_EQ(r.exit_code, 4) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "message mismatch in vcollectives")) << r.out;
}

//! A gather whose root takes 2 per rank while every rank gives 4 is a collective mismatch
//! (the send counts alone agree); one call against one, no call has a plurality.
TEST_F(CliSimgridTiTest, GatherSidesAreCompared) {
  const CommandResult r = replay("gather", "0 gather 4 2 0 1 1\n1 gather 4 2 0 1 1\n");
  EXPECT_EQ(r.exit_code, 4) << r.out << r.err;
  EXPECT_TRUE(has(r.out,
                  "no call has a plurality in world collective #0: rank 0 called gather(i32, "
                  "count=2, root=0); rank 1 called gather(i32, count=4, root=0)"))
      << r.out;
}

//! Issue 28 §1's classic bug as TI actions: rank 0 all-reduces 1 element the others never
//! do, then every rank all-reduces 8. Every rank's recorded call is read: rank 0 is blamed,
//! 1 rank against 3, under every policy and thread count, in the same words.
TEST_F(CliSimgridTiTest, TheRankThatDiffersIsBlamedUnderEveryPolicy) {
  std::string actions;
  for (int r = 0; r < 4; ++r) actions += std::to_string(r) + " allreduce 4 0 1\n";
  actions += "0 allreduce 1 0 1\n";
  for (int r = 0; r < 4; ++r) actions += std::to_string(r) + " allreduce 8 0 1\n";
  std::string first;
  for (const char* policy : {"rank-order", "random:1", "random:2", "random:3", "preempt:1=3"}) {
    for (const char* threads : {"1", "2"}) {
      const CommandResult r = replay("skip", actions,
                                     std::string("--policy ") + policy + " --threads " + threads);
      SCOPED_TRACE(std::string(policy) + " --threads " + threads);
      EXPECT_EQ(r.exit_code, 4) << r.out << r.err;
      EXPECT_TRUE(has(r.out, "\nrank 0 is the odd one: 1 rank vs 3\n")) << r.out;
      EXPECT_TRUE(has(r.out, "rank 0 called all_reduce(sum, i32, count=1) where "
                             "ranks 1-3 called all_reduce(sum, i32, count=8)"))
          << r.out;
      EXPECT_FALSE(has(r.out, "never called")) << r.out;
      // The report from its table on, which names no policy, but for the replay's timing.
      const std::string report = without_timing(
          r.out.substr(std::min(r.out.find("collective mismatch in"), r.out.size())));
      if (first.empty()) first = report;
      EXPECT_EQ(report, first);
    }
  }
}

//! Correct programs that were flagged: a buffered send to self, MPI_IN_PLACE at a gather's
//! root, receives from any source across barriers.
TEST_F(CliSimgridTiTest, CorrectProgramsReplayCleanly) {
  const CommandResult bsend = replay("bsend", "0 bsend 0 0 4\n0 recv 0 0 4\n0 finalize\n");
  EXPECT_EQ(bsend.exit_code, 0) << bsend.out << bsend.err;
  const CommandResult in_place =
      replay("in_place", "0 gather 0 4 0 1 1\n1 gather 4 4 0 1 1\n2 gather 4 4 0 1 1\n");
  EXPECT_EQ(in_place.exit_code, 0) << in_place.out << in_place.err;
  std::string phases;
  for (int i = 0; i < 3; ++i) {
    phases += "0 recv -333 0 1\n0 recv -333 0 1\n0 barrier\n";
    phases += "1 send 0 0 1\n1 barrier\n2 send 0 0 1\n2 barrier\n";
  }
  const CommandResult any = replay("any", phases);
  EXPECT_EQ(any.exit_code, 0) << any.out << any.err;
  EXPECT_TRUE(has(any.out, "result: reproduced")) << any.out;
}

//! An irecv never completed before finalize is a request leak, as MUST reports it: listed
//! FILE:LINE first, the culprit naming the call, exit 6 (unsafe).
TEST_F(CliSimgridTiTest, UnfinishedRequestsAreReported) {
  const CommandResult r = replay("open", "0 irecv 1 3 4\n0 finalize\n1 finalize\n");
  EXPECT_EQ(r.exit_code, 6) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "culprit (request-leak): ")) << r.out;
  const std::string culprit = r.out.substr(r.out.find("culprit (request-leak): "));
  EXPECT_TRUE(has(culprit.substr(0, culprit.find('\n')),
                  "open.txt:1: rank 0 op #0 (irecv from rank 1 tag 3) is still open when the rank "
                  "finalizes"))
      << r.out;
  EXPECT_TRUE(has(r.out, "requests never completed (1): the program finalized with them open\n"))
      << r.out;
  EXPECT_TRUE(has(r.out, "open.txt:1: rank 0 op #0 (irecv from rank 1 tag 3) is still open"))
      << r.out;
  EXPECT_TRUE(has(r.out, "as recorded, but 1 request never completed; run: request leak: 1 "
                         "request never completed before 1 rank finalized"))
      << r.out;
  const CommandResult json =
      replay("open_json", "0 irecv 1 3 4\n0 finalize\n1 finalize\n", "--json");
  EXPECT_TRUE(has(json.out, "\"unfinished_requests\": [")) << json.out;
  EXPECT_TRUE(has(json.out, "\"kind\": \"request-leak\"")) << json.out;
}

//! Requests the program completed without a wait TI records are not leaks: one a `test SRC
//! DST TAG` named (MPI records no test of a completed request, so its last test completed
//! it), even where a later request of its envelope is waited for; a send released by
//! MPI_Request_free (unrecorded) whose message the receiver completed. Real leaks stay: a
//! request no test named, beside one a test did; a message both sides left open.
TEST_F(CliSimgridTiTest, TestedAndFreedRequestsAreNotLeaks) {
  const std::vector<std::string> correct = {
      "0 irecv 1 0 4\n0 test 1 0 0\n0 finalize\n1 send 0 0 4\n1 finalize\n",
      "0 irecv 1 0 4\n0 test 1 0 0\n0 irecv 1 0 4\n0 wait 1 0 0\n0 finalize\n"
      "1 send 0 0 4\n1 send 0 0 4\n1 finalize\n",
      "0 isend 1 0 4\n0 finalize\n1 recv 0 0 4\n1 finalize\n",
      "0 isend 1 0 4\n0 finalize\n1 irecv 0 0 4\n1 wait 0 1 0\n1 finalize\n"};
  for (const std::string& actions : correct) {
    const CommandResult r = replay("correct", actions);
    EXPECT_EQ(r.exit_code, 0) << actions << r.out << r.err;
  }
  const CommandResult untested =
      replay("untested", "0 irecv 1 0 4\n0 irecv 1 1 4\n0 test 1 0 0\n0 finalize\n"
                         "1 send 0 0 4\n1 finalize\n");
  EXPECT_EQ(untested.exit_code, 6) << untested.out << untested.err;
  EXPECT_TRUE(has(untested.out, "culprit (request-leak): ")) << untested.out;
  EXPECT_TRUE(has(untested.out, "untested.txt:2: rank 0 op #1 (irecv from rank 1 tag 1) is "
                                "still open when the rank finalizes at line 4"))
      << untested.out;
  // A nonblocking collective: a test naming no point-to-point request tests it (SMPI writes
  // the collective's internal tag); one nothing tests or waits for stays a leak.
  const CommandResult collective_tested = replay(
      "nbc", "0 ibarrier\n0 test -333 -333 -779\n0 test -333 -333 -779\n0 ibarrier\n0 wait "
             "-333 -333 -779\n0 finalize\n1 ibarrier\n1 wait 0 0 -779\n1 ibarrier\n1 wait 0 0 "
             "-779\n1 finalize\n");
  EXPECT_EQ(collective_tested.exit_code, 0) << collective_tested.out << collective_tested.err;
  const CommandResult collective_open =
      replay("nbc_open", "0 ibarrier\n0 finalize\n1 ibarrier\n1 wait 0 0 -779\n1 finalize\n");
  EXPECT_EQ(collective_open.exit_code, 6) << collective_open.out << collective_open.err;
  EXPECT_TRUE(has(collective_open.out, "nbc_open.txt:1: rank 0 op #0 (a nonblocking collective) is "
                                       "still open when the rank finalizes at line 2"))
      << collective_open.out;
  const CommandResult both_open =
      replay("both", "0 isend 1 0 4\n0 finalize\n1 irecv 0 0 4\n1 finalize\n");
  EXPECT_EQ(both_open.exit_code, 6) << both_open.out << both_open.err;
  EXPECT_TRUE(has(both_open.out, "requests never completed (2)")) << both_open.out;
}

//! A receive cancelled and waited for (SMPI writes no cancel line) does not take the message
//! a later receive of its envelope got: the later one replays with it (was refused: "a
//! receive cannot complete without a message"). A receive the rank stopped in without a
//! message is still the deadlock, and one gone past with no cancelled irecv is refused.
TEST_F(CliSimgridTiTest, CancelledReceivesTakeNoMessage) {
  const CommandResult reuse = replay(
      "reuse", "0 irecv 1 5 4\n0 wait 1 0 5\n0 barrier\n0 recv 1 5 4\n0 finalize\n1 barrier\n1 send 0 5 4\n");
  EXPECT_EQ(reuse.exit_code, 0) << reuse.out << reuse.err;
  EXPECT_TRUE(has(reuse.out, "messages: 1 of 1 matched the recorded send")) << reuse.out;
  const CommandResult stuck =
      replay("stuck", "0 irecv 1 5 4\n0 wait 1 0 5\n0 recv 1 6 4\n1 send 0 5 4\n");
  EXPECT_EQ(stuck.exit_code, 3) << stuck.out << stuck.err;
  const CommandResult never =
      replay("never", "0 irecv 1 5 4\n0 wait 1 0 5\n0 recv 1 6 4\n0 finalize\n1 send 0 5 4\n");
  EXPECT_EQ(never.exit_code, 1) << never.out << never.err;
  EXPECT_TRUE(has(never.err, "never.txt:3: rank 0 receives from rank 1 tag 6 and no send "
                             "matches it, yet rank 0 went on past it"))
      << never.err;
}

//! SMPI 3.32's own recordings of traces/examples/ti/bugs/bugs.c (one folder per mode): each
//! replays into its report.
TEST_F(CliSimgridTiTest, RecordedBugsReplayIntoTheirReports) {
  struct Case {
    std::string mode;
    int exit_code;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"missing_recv", 3,
       "culprit (lost-message): rank 0 waits in op #0, its send of 4 x i32 to "
       "rank 1 tag 5 at "},
      {"wrong_tag", 3, "culprit (tag-mismatch): rank 1 waits in recv from rank 0 tag 6"},
      {"missing_reduce", 3,
       "culprit (missing-participant): rank 2 returned while ranks 0 and 1 "
       "wait for it (rank 0 in reduce #0"},
      {"bsend_self", 0, "result: reproduced: all 6 operations and 3 messages"},
      {"inplace_gather", 0, "result: reproduced: all 3 operations"},
      {"anysource_loop", 0, "result: reproduced: all 30 operations and 9 messages"},
      {"open_request", 6, "culprit (request-leak): "},
      {"nonblocking", 0, "result: reproduced: all 9 operations"},
      {"unsigned_recv", 4,
       "culprit (message-mismatch): message mismatch in world: rank 0 (op #0) sends 4 x "
       "MPI_UNSIGNED to rank 1 tag 0 at "},
      {"unsigned_recv", 4,
       "rank-2.txt:3: the element types differ in signedness (unsigned against signed)\n"},
      {"unsigned_ok", 0, "result: reproduced: all 4 operations and 2 messages"},
      {"test_loop", 0, "result: reproduced: all 8 operations and 4 messages as recorded; run: ok"},
      {"request_free", 0,
       "result: reproduced: all 7 operations and 2 messages as recorded; run: ok"},
      {"cancel_test", 0, "result: reproduced: all 6 operations and 1 message as recorded; run: ok"},
      {"nbc_test", 0, "result: reproduced: all 6 operations as recorded; run: ok"},
      {"cancel_reuse", 0,
       "result: reproduced: all 6 operations and 1 message as recorded; run: ok"},
      {"free_unreceived", 6,
       "free_unreceived/trace.txt_files/1796217969.388194_rank-1.txt:3: rank 0 op #0 (isend to "
       "rank 1 tag 3) is still open when the rank finalizes at line 6: no wait completed it "
       "(and 1 more)\n"},
      // A derived datatype equals only a derived datatype (TI records no type map).
      {"derived", 4,
       "culprit (message-mismatch): message mismatch in world: rank 0 (op #0) sends 2 x a "
       "derived datatype to rank 1 tag 0 at "},
      {"derived", 4,
       "rank-2.txt:3: the element types differ (TI records no type map, so a derived datatype "
       "equals only a derived datatype: against MPI_INT its size is unknown)\n"},
      {"derived_same", 0, "result: reproduced: all 8 operations and 1 message as recorded"},
      {"derived_same", 0,
       "note: 8 actions use a derived datatype (SMPI writes -1 and the count, never the size; "
       "the first at "},
      {"derived_short", 4,
       "receives it into 1 x a derived datatype at "},
      {"derived_short", 4,
       "rank-2.txt:3: the receive buffer is smaller than the message (in elements of a derived "
       "datatype: TI writes -1 for every one, so both are taken for the same type)\n"},
  };
  const auto bugs = tools_testing::examples_dir() / "ti" / "bugs";
  for (const Case& c : cases) {
    const CommandResult r =
        tools_testing::run_ranklab("replay --format simgrid-ti " + shell_quoted(bugs / c.mode));
    EXPECT_EQ(r.exit_code, c.exit_code) << c.mode << "\n" << r.out << r.err;
    EXPECT_TRUE(has(r.out + r.err, c.expected)) << c.mode << "\n" << r.out << r.err;
  }
  // --json says the sizes are unknown too.
  const CommandResult json = tools_testing::run_ranklab(
      "replay --format simgrid-ti " + shell_quoted(bugs / "derived_same") + " --json");
  EXPECT_EQ(json.exit_code, 0) << json.err;
  EXPECT_TRUE(has(json.out, "\"notes\": [\n    \"8 actions use a derived datatype")) << json.out;
}

//! SMPI 3.32's recordings of traces/examples/ti/actions/actions.c: what TI records fully
//! replays (persistent requests, testall, a cancelled irecv, nonblocking allgather and
//! alltoall); what it records too little of is refused at its line.
TEST_F(CliSimgridTiTest, RecordedActionsReplayOrAreRefused) {
  const std::vector<std::pair<std::string, std::string>> replayed = {
      {"persistent", "all 4 operations and 2 messages"},
      {"testall", "all 2 operations and 1 message"},
      {"cancel", "the 1 operation as recorded"},  // was "all 1 operation and 0 messages"
      {"iall", "all 6 operations"},
      {"vcoll", "all 39 operations and 18 messages"},
      {"scan", "all 8 operations and 4 messages"},
      {"waitany", "all 4 operations and 2 messages"}};
  const auto actions = tools_testing::examples_dir() / "ti" / "actions";
  for (const auto& [mode, expected] : replayed) {
    const CommandResult r =
        tools_testing::run_ranklab("replay --format simgrid-ti " + shell_quoted(actions / mode));
    EXPECT_EQ(r.exit_code, 0) << mode << "\n" << r.out << r.err;
    EXPECT_TRUE(has(r.out, "result: reproduced: " + expected)) << mode << "\n" << r.out;
  }
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"rs_block", "rank-1.txt:3: reducescatter: MPI_Reduce_scatter_block"}};
  for (const auto& [mode, expected] : refused) {
    const CommandResult r =
        tools_testing::run_ranklab("replay --format simgrid-ti " + shell_quoted(actions / mode));
    EXPECT_EQ(r.exit_code, 1) << mode << "\n" << r.out << r.err;
    EXPECT_TRUE(has(r.err, expected)) << mode << "\n" << r.err;
  }
}

}  // namespace
}  // namespace ranklab
