// The SimGrid TI importer (traces/simgrid_ti.hpp) on SMPI's own recordings (the examples)
// and on hand-written actions: what each action becomes, wait points, matching, the
// recording of a deadlock, and `FILE:LINE: reason` for everything malformed.
#include "traces/simgrid_ti.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <numeric>

#include "tests/support/expect_throw_msg.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/traces_tools/tools_support.hpp"
#include "traces/error.hpp"
#include "traces/event_text.hpp"
#include "traces/messages.hpp"
#include "traces/virtual_time.hpp"

namespace ranklab {
namespace {

std::filesystem::path ti_example(const std::string& name) {
  return tools_testing::examples_dir() / "ti" / name;
}

std::vector<OpKind> ops_of(const std::vector<TraceEvent>& events) {
  std::vector<OpKind> ops;
  for (const TraceEvent& e : events) ops.push_back(e.op);
  return ops;
}

//! SMPI's ring recording: 8 ranks of three laps (send/recv ring, allreduce, bcast, barrier),
//! every message matched, compute lines carried as FLOPs.
TEST(SimgridTiTest, RingRecordingImports) {
  const Trace trace = read_simgrid_ti(ti_example("ring8"));
  EXPECT_EQ(trace.header.world_size, 8);
  EXPECT_EQ(trace.header.version, "1.4");
  using K = OpKind;
  const std::vector<OpKind> lap = {K::send, K::recv, K::all_reduce, K::broadcast, K::barrier};
  std::vector<OpKind> three;
  for (int i = 0; i < 3; ++i) three.insert(three.end(), lap.begin(), lap.end());
  EXPECT_EQ(ops_of(trace.ranks[0]), three);
  const TraceEvent& send = trace.ranks[0][0];
  EXPECT_EQ(send.peer, 1);
  EXPECT_EQ(send.dtype, DataType::f64);
  EXPECT_EQ(send.count, 256u);
  EXPECT_DOUBLE_EQ(send.compute.flops, 0.41242);
  EXPECT_EQ(trace.ranks[0][3].root, 0);  // bcast 16 0 0
  EXPECT_EQ(trace.ranks[0][3].count, 16u);
  EXPECT_DOUBLE_EQ(trace.ranks[0].back().compute_after.flops, 0.03986);
  const MessageLinks links = link_messages(trace);
  EXPECT_EQ(links.links.size(), 24u);
  EXPECT_EQ(links.dangling_receives, 0u);
  // Through the index file itself, the same trace.
  EXPECT_EQ(read_simgrid_ti(ti_example("ring8") / "trace.txt"), trace);
}

//! irecv/isend/waitall and isend/recv/wait become wait points; any-source receives (SMPI
//! writes -333) are matched; sendRecv, every collective and SMPI's datatypes map.
TEST(SimgridTiTest, MixedRecordingImports) {
  const Trace trace = read_simgrid_ti(ti_example("mix4"));
  ASSERT_EQ(trace.header.world_size, 4);
  const auto& r0 = trace.ranks[0];
  EXPECT_EQ(r0[0].op, OpKind::recv);  // irecv 3 3 64 0
  EXPECT_EQ(r0[1].op, OpKind::send);  // isend 1 3 64 0, while the irecv is open
  EXPECT_EQ(r0[1].in_flight, (std::vector<std::uint64_t>{0}));
  EXPECT_EQ(r0[3].op, OpKind::recv);  // recv 3 4 32 5, while isend #2 is open
  EXPECT_EQ(r0[3].in_flight, (std::vector<std::uint64_t>{2}));
  EXPECT_EQ(r0[3].dtype, DataType::f32);
  EXPECT_TRUE(r0[4].in_flight.empty());  // `wait 0 1 4` closed it
  for (int i = 0; i < 3; ++i) {          // recv -333 5 8 1: any source, lowest sender first
    EXPECT_EQ(r0[4 + i].peer, i + 1);
    EXPECT_EQ(r0[4 + i].dtype, DataType::i32);
  }
  EXPECT_EQ(r0[7].op, OpKind::send);  // sendRecv: tag 0 both ways
  EXPECT_EQ(r0[8].op, OpKind::recv);
  EXPECT_EQ(r0[8].tag, 0);
  const std::vector<OpKind> collectives = {
      OpKind::reduce,     OpKind::all_gather,     OpKind::gather,
      OpKind::scatter,    OpKind::all_to_all,     OpKind::broadcast,
      OpKind::all_reduce, OpKind::reduce_scatter, OpKind::barrier};
  const std::vector<OpKind> ops = ops_of(r0);
  EXPECT_EQ(std::vector<OpKind>(ops.begin() + 9, ops.end()), collectives);
  EXPECT_EQ(r0[9].root, 1);
  EXPECT_EQ(r0[14].root, 2);
  EXPECT_EQ(r0[15].dtype, DataType::i64);  // allreduce of MPI_LONG_LONG (id 7)
  EXPECT_EQ(r0[15].count, 2u);
  EXPECT_EQ(link_messages(trace).links.size(), 15u);
}

//! SMPI's recording of a deadlock stops mid-operation: each rank's last operation is
//! pending, and blocked (the rank was waiting in it).
TEST(SimgridTiTest, DeadlockRecordingEndsPending) {
  const Trace trace = read_simgrid_ti(ti_example("deadlock3"));
  ASSERT_EQ(trace.header.world_size, 3);
  for (int r = 0; r < 3; ++r) {
    ASSERT_EQ(trace.ranks[r].size(), 1u);
    EXPECT_EQ(trace.ranks[r][0].status, OpStatus::pending) << r;
    EXPECT_TRUE(trace.ranks[r][0].blocked) << r;
  }
  EXPECT_EQ(trace.ranks[0][0].peer, 1);
  EXPECT_FALSE(trace.ranks[0][0].msg.valid());
  EXPECT_EQ(trace.ranks[2][0].op, OpKind::barrier);
  EXPECT_FALSE(simulate(trace, CostModel::alpha_beta(1e-6, 1e9)).complete);
}

//! The one-file format (every rank in one file, interleaved) and an isend left open at the
//! end (dropped, not blocked); compute and sleep become compute; the default datatype.
TEST(SimgridTiTest, OneFileActions) {
  const Trace trace = parse_simgrid_ti(
      "0 init\n1 init\n"
      "0 compute 2e9\n0 isend 1 7 10\n"
      "1 sleep 0.5\n1 recv 0 7 10\n"
      "0 isend 1 8 4 5\n"
      "1 finalize\n",
      "one.txt");
  const auto& r0 = trace.ranks[0];
  EXPECT_EQ(r0[0].dtype, DataType::u8);  // no datatype after a bare init: MPI_BYTE
  EXPECT_DOUBLE_EQ(r0[0].compute.flops, 2e9);
  EXPECT_EQ(r0[1].status, OpStatus::pending);  // nobody receives tag 8, and rank 0 ended
  EXPECT_FALSE(r0[1].blocked);
  EXPECT_EQ(r0[1].in_flight, (std::vector<std::uint64_t>{0}));
  EXPECT_DOUBLE_EQ(trace.ranks[1][0].compute.seconds, 0.5);
  // 2 s of compute at 1 GFLOP/s, then the 10-byte message (α = 1 µs, β = 1 GB/s).
  const VirtualTimes t = simulate(trace, CostModel::alpha_beta(1e-6, 1e9, 1e9));
  EXPECT_DOUBLE_EQ(t.operations[1][0].end, 2.0 + 1e-6 + 10 / 1e9);
}

struct BadCase {
  std::string name;
  std::string text;
  std::string error;
};

class SimgridTiErrorTest : public ::testing::TestWithParam<BadCase> {};

//! Malformed actions: one TraceError naming the file and line.
TEST_P(SimgridTiErrorTest, SaysFileLineAndReason) {
  EXPECT_THROW_MSG(parse_simgrid_ti(GetParam().text, "t.txt"), TraceError, GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SimgridTiErrorTest,
    ::testing::Values(
        BadCase{"Empty", "\n \n", "t.txt: no actions (not a SimGrid time-independent trace)"},
        BadCase{"NotARank", "zero init\n",
                "t.txt:1: expected 'RANK ACTION ...' with RANK in [0, 65536), got 'zero'"},
        BadCase{"HugeRank", "70000 init\n",
                "t.txt:1: expected 'RANK ACTION ...' with RANK in [0, 65536), got '70000'"},
        BadCase{"NoAction", "0 init\n1\n", "t.txt:2: rank 1: no action"},
        BadCase{"Unknown", "0 init\n0 waitfor 2\n",
                "t.txt:2: unknown or unsupported action 'waitfor'"},
        BadCase{"ReduceScatterBlock", "0 reducescatter 0 0 1\n1 init\n2 init\n",
                "t.txt:1: reducescatter: MPI_Reduce_scatter_block, which SMPI 3.32 records "
                "without its count"},
        BadCase{"Cancel", "0 irecv 0 0 1\n0 cancel\n",
                "t.txt:2: cancel: TI does not record whether MPI_Cancel succeeded"},
        BadCase{"MissingArgs", "0 send 1 0\n1 init\n",
                "t.txt:1: send needs DST TAG COUNT [DTYPE] (got 2 arguments)"},
        BadCase{"CountNotInteger", "0 send 1 0 2.5 0\n1 recv 0 0 2 0\n",
                "t.txt:1: count must be an integer, got '2.5'"},
        BadCase{"CountTooLarge", "0 send 1 0 281474976710657\n1 init\n",
                "t.txt:1: count 281474976710657 out of range [0, 2^48]"},
        BadCase{"CountTimesTypeTooLarge", "0 send 1 0 281474976710656 3\n1 recv 0 0 1\n",
                "t.txt:1: count 281474976710656 of SMPI datatype 3 is 562949953421312 x u8, over "
                "the limit of 2^48 elements"},
        BadCase{"CollectiveCountTimesTypeTooLarge", "0 bcast 17592186044417 0 14\n",
                "t.txt:1: count 17592186044417 of SMPI datatype 14 is 281474976710672 x u8, over "
                "the limit of 2^48 elements"},
        BadCase{"LongTokenIsCut", "0 " + std::string(100'000, 'x') + "\n",
                "t.txt:1: unknown or unsupported action '" + std::string(80, 'x') +
                    "'... (100000 bytes)"},
        BadCase{"PeerOutside", "0 send 5 0 1\n1 init\n",
                "t.txt:1: destination 5 is outside the world of 2 ranks"},
        BadCase{"NegativeTag", "0 send 1 -2 1\n1 init\n", "t.txt:1: tag -2 out of range"},
        BadCase{"NegativeCompute", "0 compute -1\n",
                "t.txt:1: FLOPs must be a finite number >= 0, got '-1'"},
        // Found by ti_importer_fuzzer: an infinite amount was imported and written as `inf`,
        // which no JSON reader (ranklab's included) reads back.
        BadCase{"InfiniteCompute", "0 compute inf\n",
                "t.txt:1: FLOPs must be a finite number >= 0, got 'inf'"},
        BadCase{"NanCompute", "0 compute nan\n",
                "t.txt:1: FLOPs must be a finite number >= 0, got 'nan'"},
        BadCase{"NegativeDatatype", "0 send 0 0 1 -2\n",
                "t.txt:1: datatype -2 is not an index of SMPI's table"},
        BadCase{"StartOfDerivedDatatype", "0 Start 1 0 24 -1\n1 recv 0 0 2 -1\n",
                "t.txt:1: Start of a derived datatype: SMPI writes a persistent request's size "
                "in bytes and every other call's count in elements of the derived type, whose "
                "size TI does not record, so it compares with none of them"},
        BadCase{"CountPerRank", "0 allgatherv 1 1\n1 allgatherv 1 1 2 0 0\n",
                "t.txt:1: allgatherv needs SENDCOUNT RECVCOUNTS... [DT1 [DT2]] (got 2 "
                "arguments)"},
        BadCase{"ReceiveNeverSent", "0 recv 1 3 4\n0 finalize\n1 init\n",
                "t.txt:1: rank 0 receives from rank 1 tag 3 and no send matches it, yet rank 0 "
                "went on past it (a receive cannot complete without a message)"}),
    [](const auto& param) { return param.param.name; });

//! Files that cannot be read are named: a folder without trace.txt, an index line naming a
//! missing file.
TEST(SimgridTiTest, MissingFilesAreNamed) {
  testing::TempDir dir("ranklab_ti");
  EXPECT_THROW_MSG(read_simgrid_ti(dir.path()), TraceError, "no trace.txt in this folder");
  std::ofstream(dir / "trace.txt") << "files/rank-1.txt\nfiles/rank-2.txt\n";
  std::filesystem::create_directories(dir / "files");
  std::ofstream(dir / "files" / "rank-1.txt") << "0 init\n";
  EXPECT_THROW_MSG(read_simgrid_ti(dir / "trace.txt"), TraceError,
                   (dir / "trace.txt").string() + ":2: " + (dir / "files" / "rank-2.txt").string() +
                       ": cannot open listed file (No such file or directory)");
  std::ofstream(dir / "files" / "rank-2.txt") << "1 init\n1 bogus\n";
  EXPECT_THROW_MSG(
      read_simgrid_ti(dir.path()), TraceError,
      (dir / "files" / "rank-2.txt").string() + ":2: unknown or unsupported action 'bogus'");
}

//! An index that lists a device (/dev/zero reads without end) is refused at that line,
//! before a byte of the device is read; so is a device given as the trace itself.
TEST(SimgridTiTest, DevicesAreRefused) {
  testing::TempDir dir("ranklab_ti");
  std::ofstream(dir / "trace.txt") << "/dev/zero\n";
  EXPECT_THROW_MSG(
      read_simgrid_ti(dir.path()), TraceError,
      (dir / "trace.txt").string() + ":1: /dev/zero: not a regular file (a character device)");
  EXPECT_THROW_MSG(read_simgrid_ti("/dev/zero"), TraceError,
                   "/dev/zero: not a regular file (a character device)");
}

//! Imported events keep the file and line of the action that posted them, so a refusal
//! after import (replay) names them.
TEST(SimgridTiTest, EventsKeepTheirFileAndLine) {
  const Trace trace = parse_simgrid_ti("0 init\n1 init\n\n1 recv 0 0 4\n0 send 1 0 4\n", "t.txt");
  EXPECT_EQ(source_of(trace, trace.ranks[0].at(0)), "t.txt:5");
  EXPECT_EQ(source_of(trace, trace.ranks[1].at(0)), "t.txt:4");
  const Trace files = read_simgrid_ti(ti_example("mix4"));
  const TraceEvent& first = files.ranks[2].at(0);
  EXPECT_TRUE(
      source_of(files, first).ends_with("mix4/trace.txt_files/1796021342.241363_rank-3.txt:3"))
      << source_of(files, first);  // `2 irecv 1 3 64 0`, after init and compute
}

//! The program's bugs are imported, not refused: a send nobody receives that its rank went
//! on past (SMPI sent it eagerly) and a collective another rank never joined stay completed,
//! for the replay to show the deadlock they are under rendezvous.
TEST(SimgridTiTest, BugsTheRankWentPastAreImported) {
  const Trace lost = parse_simgrid_ti("0 send 1 0 4\n0 barrier\n1 barrier\n", "t.txt");
  EXPECT_EQ(lost.ranks[0][0].status, OpStatus::completed);
  EXPECT_TRUE(lost.ranks[0][0].msg.valid());
  EXPECT_TRUE(link_messages(lost).links.empty());
  const Trace skipped = parse_simgrid_ti("0 barrier\n0 compute 1\n1 compute 1\n", "t.txt");
  EXPECT_EQ(skipped.ranks[0][0].status, OpStatus::completed);
  EXPECT_TRUE(skipped.ranks[1].empty());
}

//! A matched receive records the message, unless its own buffer cannot take it (fewer
//! elements, another type): then it keeps its own count and type, for the replay to compare.
TEST(SimgridTiTest, ReceivesKeepTheirOwnSignature) {
  const auto recv_of = [](const std::string& text) {
    return parse_simgrid_ti(text, "t.txt").ranks[1].at(0);
  };
  const TraceEvent smaller = recv_of("0 send 1 0 5000 1\n1 recv 0 0 1000 1\n");
  EXPECT_EQ(smaller.count, 1000u);
  EXPECT_EQ(smaller.dtype, DataType::i32);
  EXPECT_TRUE(smaller.msg.valid());
  const TraceEvent other_type = recv_of("0 send 1 0 4 1\n1 recv 0 0 4 0\n");
  EXPECT_EQ(other_type.dtype, DataType::f64);
  EXPECT_EQ(other_type.bytes, 32u);
  const TraceEvent larger = recv_of("0 send 1 0 5000 1\n1 recv 0 0 8000 1\n");
  EXPECT_EQ(larger.count, 5000u);  // MPI allows it: the fabric records the message's 5000
  const TraceEvent probed = recv_of("0 send 1 0 7 1\n1 recv 0 0 -1 1\n");
  EXPECT_EQ(probed.count, 7u);
  const TraceEvent sendrecv =
      parse_simgrid_ti("0 sendRecv 4 1 2 1 1 1\n1 sendRecv 4 0 4 0 1 0\n", "t.txt").ranks[0][1];
  EXPECT_EQ(sendrecv.count, 2u);  // rank 0 takes 2 of rank 1's 4
}

//! SMPI types that ranklab's element types cannot tell apart, sent and received: integers
//! of another signedness are listed in config.type_mismatches (for replay to report), with
//! both MPI names; the same type, or MPI_INT against MPI_INT32_T, are not. Counts are in
//! elements for every type: 3 MPI_UNSIGNED are 3 x i32.
TEST(SimgridTiTest, SignednessClashesAreListed) {
  const Trace clash = parse_simgrid_ti("0 send 1 7 3 11\n1 recv 0 7 3 1\n", "t.txt");
  EXPECT_EQ(clash.ranks[0][0].dtype, DataType::i32);
  EXPECT_EQ(clash.ranks[0][0].count, 3u);
  ASSERT_TRUE(clash.header.config.contains("type_mismatches"));
  EXPECT_EQ(clash.header.config["type_mismatches"],
            nlohmann::json::array({"message mismatch in world: rank 0 (op #0) sends 3 x "
                                   "MPI_UNSIGNED to rank 1 tag 7 at t.txt:1; rank 1 (op #0) "
                                   "receives it into 3 x MPI_INT at t.txt:2: the element types "
                                   "differ in signedness (unsigned against signed)"}));
  for (const char* alike : {"0 send 1 7 3 11\n1 recv 0 7 3 11\n", "0 send 1 7 3 1\n1 recv 0 7 3 19\n"}) {
    EXPECT_FALSE(parse_simgrid_ti(alike, "t.txt").header.config.contains("type_mismatches"))
        << alike;
  }
}

//! A derived datatype (SMPI writes -1 and the count, never the size) replays as its count of
//! opaque elements, equal only to a derived datatype: against MPI_INT, or fewer received than
//! sent, it is listed in config.type_mismatches; against another derived datatype of as many,
//! or MPI_BYTE (which takes anything), it is not. config.notes says the sizes are unknown.
TEST(SimgridTiTest, DerivedDatatypesReplayByCount) {
  const Trace same = parse_simgrid_ti(
      "0 send 1 0 2 -1\n0 bcast 1 0 -1 \n1 recv 0 0 2 -1\n1 bcast 1 0 -1 \n", "t.txt");
  EXPECT_EQ(same.ranks[0][0].count, 2u);
  EXPECT_EQ(same.ranks[1][0].count, 2u);
  EXPECT_TRUE(same.ranks[1][0].msg.valid());
  EXPECT_EQ(same.ranks[0][1].op, OpKind::broadcast);
  EXPECT_FALSE(same.header.config.contains("type_mismatches"));
  EXPECT_EQ(same.header.config["notes"],
            nlohmann::json::array(
                {"4 actions use a derived datatype (SMPI writes -1 and the count, never the "
                 "size; the first at t.txt:1): each replays as its count of opaque 1-byte "
                 "elements (shown as u8), equal only to a derived datatype, so the bytes it "
                 "moves, and its time under --cost, are unknown"}));
  const Trace against_int = parse_simgrid_ti("0 send 1 0 2 -1\n1 recv 0 0 6 1\n", "t.txt");
  EXPECT_EQ(against_int.header.config["type_mismatches"],
            nlohmann::json::array(
                {"message mismatch in world: rank 0 (op #0) sends 2 x a derived datatype to rank 1 "
                 "tag 0 at t.txt:1; rank 1 (op #0) receives it into 6 x MPI_INT at t.txt:2: the "
                 "element types differ (TI records no type map, so a derived datatype equals "
                 "only a derived datatype: against MPI_INT its size is unknown)"}));
  const Trace fewer = parse_simgrid_ti("0 send 1 0 2 -1\n1 recv 0 0 1 -1\n", "t.txt");
  ASSERT_TRUE(fewer.header.config.contains("type_mismatches"));
  EXPECT_NE(fewer.header.config["type_mismatches"][0].get<std::string>().find(
                "the receive buffer is smaller than the message"),
            std::string::npos);
  const Trace bytes = parse_simgrid_ti("0 send 1 0 2 -1\n1 recv 0 0 64 6\n", "t.txt");
  EXPECT_FALSE(bytes.header.config.contains("type_mismatches"));
  EXPECT_FALSE(parse_simgrid_ti("0 send 1 0 2 1\n1 recv 0 0 2 1\n", "t.txt")
                   .header.config.contains("notes"));
}

//! A receive gone past without a message takes the one an earlier irecv of its rank took,
//! which a wait completed: that irecv was cancelled (unrecorded), so it is pending, dropped.
//! A `test SRC DST TAG` completes the request it names: not listed as unfinished.
TEST(SimgridTiTest, CancelledAndTestedRequests) {
  const Trace reuse = parse_simgrid_ti(
      "0 irecv 1 5 4\n0 wait 1 0 5\n0 barrier\n0 recv 1 5 4\n0 finalize\n1 barrier\n1 send 0 5 4\n", "t.txt");
  const auto& r0 = reuse.ranks[0];
  EXPECT_EQ(r0[0].status, OpStatus::pending);
  EXPECT_FALSE(r0[0].blocked);
  EXPECT_FALSE(r0[0].msg.valid());
  EXPECT_EQ(r0[2].status, OpStatus::completed);
  EXPECT_EQ(r0[2].msg, (MessageId{1, 1}));
  EXPECT_EQ(link_messages(reuse).links.size(), 1u);
  const Trace tested = parse_simgrid_ti(
      "0 irecv 1 0 4\n0 irecv 1 1 4\n0 test 1 0 1\n0 finalize\n1 send 0 1 4\n1 finalize\n",
      "t.txt");
  ASSERT_TRUE(tested.header.config.contains("unfinished_requests"));
  EXPECT_EQ(tested.header.config["unfinished_requests"],
            nlohmann::json::array({"t.txt:1: rank 0 op #0 (irecv from rank 1 tag 0) is still "
                                   "open when the rank finalizes at line 4: no wait completed "
                                   "it"}));
}

//! gather and scatter: each rank's unit is its own side (the root's receive of a gather, its
//! send of a scatter; the others' opposite), so sides that disagree stay apart; MPI_IN_PLACE's
//! send count of 0 at a gather's root is not compared; SMPI leaves out a receive count of 0.
TEST(SimgridTiTest, GatherAndScatterKeepEachSide) {
  const Trace gather = parse_simgrid_ti("0 gather 2 2 0 1 1\n1 gather 4 2 0 1 0\n", "t.txt");
  EXPECT_EQ(gather.ranks[0][0].count, 2u);
  EXPECT_EQ(gather.ranks[1][0].count, 4u);
  EXPECT_EQ(gather.ranks[1][0].dtype, DataType::i32);
  const Trace in_place = parse_simgrid_ti("0 gather 0 4 0 1 1\n1 gather 4 0 1 1\n", "t.txt");
  EXPECT_EQ(in_place.ranks[0][0].count, 4u);
  EXPECT_EQ(in_place.ranks[1][0].count, 4u);
  EXPECT_EQ(in_place.ranks[1][0].root, 0);
  const Trace scatter = parse_simgrid_ti("1 scatter 3 3 1 5 5\n0 scatter 0 2 1 5 0\n", "t.txt");
  EXPECT_EQ(scatter.ranks[1][0].count, 3u);
  EXPECT_EQ(scatter.ranks[1][0].dtype, DataType::f32);
  EXPECT_EQ(scatter.ranks[0][0].count, 2u);
  EXPECT_EQ(scatter.ranks[0][0].dtype, DataType::f64);
}

//! bsend is buffered by definition: nothing waits for it until the rank's end, so a
//! buffered send to self followed by its receive is no deadlock.
TEST(SimgridTiTest, BufferedSendsAreNotWaitedFor) {
  const Trace trace = parse_simgrid_ti("0 bsend 0 0 4\n0 recv 0 0 4\n0 finalize\n", "t.txt");
  const auto& r0 = trace.ranks[0];
  EXPECT_EQ(r0[1].in_flight, (std::vector<std::uint64_t>{0}));
  EXPECT_EQ(r0[1].msg, r0[0].msg);
  const Trace ibsend =
      parse_simgrid_ti("0 ibsend 0 0 4\n0 wait 0 0 0\n0 recv 0 0 4\n", "t.txt");
  EXPECT_EQ(ibsend.ranks[0][1].in_flight, (std::vector<std::uint64_t>{0}));
}

//! A buffered send is waited for once its receive is surely posted, not at the rank's end
//! (wait lists holding every bsend grew with their number squared): after the first
//! collective of the world its receive was posted before, or after a receive of a message
//! its receiver sent after posting that receive.
TEST(SimgridTiTest, BufferedSendsCloseOnceTheirReceiveIsPosted) {
  const Trace phases = parse_simgrid_ti(
      "0 bsend 1 0 4\n0 barrier\n0 compute 1\n0 barrier\n1 recv 0 0 4\n1 barrier\n1 barrier\n",
      "t.txt");
  EXPECT_EQ(phases.ranks[0][1].in_flight, (std::vector<std::uint64_t>{0}));
  EXPECT_TRUE(phases.ranks[0][2].in_flight.empty());
  const Trace ping_pong = parse_simgrid_ti(
      "0 bsend 1 0 4\n0 recv 1 0 4\n0 send 1 1 4\n1 recv 0 0 4\n1 send 0 0 4\n1 recv 0 1 4\n",
      "t.txt");
  EXPECT_EQ(ping_pong.ranks[0][1].in_flight, (std::vector<std::uint64_t>{0}));
  EXPECT_TRUE(ping_pong.ranks[0][2].in_flight.empty());
  // Nothing says rank 1 posted its receive before rank 0's end: open until then.
  const Trace flood = parse_simgrid_ti("0 bsend 1 0 4\n0 bsend 1 0 4\n1 recv 0 0 4\n1 recv 0 0 4\n",
                                       "t.txt");
  EXPECT_EQ(flood.ranks[0][1].in_flight, (std::vector<std::uint64_t>{0}));
}

//! Receives from any source match within the phase the world's barriers mark: rank 0's
//! second receive of the first iteration takes rank 2's message, not rank 1's of the next
//! iteration (lowest sender first gave that, and a false deadlock on replay).
TEST(SimgridTiTest, AnySourceMatchesWithinPhases) {
  std::string text;
  for (int i = 0; i < 2; ++i) {
    text += "0 recv -333 0 1\n0 recv -333 0 1\n0 barrier\n";
    text += "1 send 0 0 1\n1 barrier\n2 send 0 0 1\n2 barrier\n";
  }
  const Trace trace = parse_simgrid_ti(text, "t.txt");
  std::vector<int> peers;
  for (const TraceEvent& e : trace.ranks[0]) {
    if (e.op == OpKind::recv) peers.push_back(e.peer);
  }
  EXPECT_EQ(peers, (std::vector<int>{1, 2, 1, 2}));
}

//! Nonblocking collectives stay open until a wait (TI names no request for them: the
//! oldest) or waitall; tests (test, testall, ...) are no-ops.
TEST(SimgridTiTest, NonblockingCollectivesAreOpenUntilWaited) {
  const Trace trace = parse_simgrid_ti(
      "0 ibarrier\n0 send 1 0 1\n0 wait -1 -1 -1\n0 iallreduce 4 0 1\n0 testall 1\n"
      "0 waitall\n0 barrier\n"
      "1 ibarrier\n1 recv 0 0 1\n1 iallreduce 4 0 1\n1 waitall\n1 barrier\n",
      "t.txt");
  const auto& r0 = trace.ranks[0];
  ASSERT_EQ(ops_of(r0), (std::vector<OpKind>{OpKind::barrier, OpKind::send, OpKind::all_reduce,
                                             OpKind::barrier}));
  EXPECT_EQ(r0[1].in_flight, (std::vector<std::uint64_t>{0}));
  EXPECT_TRUE(r0[2].in_flight.empty());  // the wait closed the ibarrier
  EXPECT_TRUE(r0[3].in_flight.empty());  // waitall closed the iallreduce
  EXPECT_EQ(trace.ranks[1][2].in_flight, (std::vector<std::uint64_t>{0}));
  EXPECT_EQ(trace.ranks[1][2].count, 4u);
  const Trace open = parse_simgrid_ti("0 ibcast 4 0 1\n0 finalize\n", "t.txt");
  EXPECT_EQ(open.header.config.at("unfinished_requests").size(), 1u);
}

//! v-collectives become the messages they consist of (each pair its own count), in a group
//! of their own: gatherv as SMPI records it (zeros for the counts at the other ranks), and
//! reducescatter with unequal blocks as a reduce to rank 0 and its scatter.
TEST(SimgridTiTest, VCollectivesBecomeMessages) {
  const Trace gatherv = parse_simgrid_ti(
      "0 gatherv 1 1 2 3 0 1 1\n1 gatherv 2 0 0 0 0 1 1\n2 gatherv 3 0 0 0 0 1 1\n", "t.txt");
  ASSERT_EQ(gatherv.header.groups.size(), 2u);
  EXPECT_EQ(gatherv.header.groups[1].name, "vcollectives");
  const auto& root = gatherv.ranks[0];
  ASSERT_EQ(ops_of(root), (std::vector<OpKind>{OpKind::recv, OpKind::recv}));
  EXPECT_EQ(root[0].peer, 1);
  EXPECT_EQ(root[0].count, 2u);
  EXPECT_EQ(root[1].count, 3u);
  EXPECT_EQ(root[1].in_flight, (std::vector<std::uint64_t>{0}));
  EXPECT_EQ(gatherv.ranks[2][0].op, OpKind::send);
  EXPECT_EQ(gatherv.ranks[2][0].group, 1u);
  EXPECT_EQ(link_messages(gatherv).links.size(), 2u);
  const Trace rs = parse_simgrid_ti(
      "0 reducescatter 1 2 0 1\n1 reducescatter 1 2 0 1\n", "t.txt");
  ASSERT_EQ(ops_of(rs.ranks[1]), (std::vector<OpKind>{OpKind::reduce, OpKind::recv}));
  EXPECT_EQ(rs.ranks[1][0].count, 3u);
  EXPECT_EQ(rs.ranks[1][1].count, 2u);
}

//! scan and exscan (`scan COUNT COMP DTYPE`) are the linear algorithm's messages: each rank
//! takes its predecessor's prefix and hands its own to its successor.
TEST(SimgridTiTest, ScansBecomeAChainOfMessages) {
  const Trace trace =
      parse_simgrid_ti("0 scan 2 0 1\n1 scan 2 0 1\n2 scan 2 0 1\n", "t.txt");
  EXPECT_EQ(ops_of(trace.ranks[0]), (std::vector<OpKind>{OpKind::send}));
  EXPECT_EQ(ops_of(trace.ranks[1]), (std::vector<OpKind>{OpKind::send, OpKind::recv}));
  EXPECT_EQ(trace.ranks[1][1].peer, 0);
  EXPECT_EQ(ops_of(trace.ranks[2]), (std::vector<OpKind>{OpKind::recv}));
  EXPECT_EQ(link_messages(trace).links.size(), 2u);
}

//! waitAny: TI does not say which request it completed, so its requests stay open to the
//! next wait that names them (here the rank's end), never waited for earlier than the
//! program did; a recording that stops in a waitany was blocked in its open requests.
TEST(SimgridTiTest, WaitAnyDefersItsRequests) {
  const Trace trace = parse_simgrid_ti(
      "0 irecv 1 0 1 1\n0 irecv 2 0 1 1\n0 waitAny 2\n0 waitAny 2\n0 barrier\n0 finalize\n"
      "1 send 0 0 1 1\n1 barrier\n2 send 0 0 1 1\n2 barrier\n",
      "t.txt");
  EXPECT_EQ(trace.ranks[0][2].in_flight, (std::vector<std::uint64_t>{0, 1}));  // the barrier
  EXPECT_FALSE(trace.header.config.contains("unfinished_requests"));
  const Trace stuck = parse_simgrid_ti("0 irecv 1 0 1 1\n0 waitAny 1\n1 init\n", "t.txt");
  EXPECT_EQ(stuck.ranks[0][0].status, OpStatus::pending);
  EXPECT_TRUE(stuck.ranks[0][0].blocked);
}

//! Persistent requests as SMPI 3.32 records them (`Start ENDPOINT TAG BYTES DTYPE`, the
//! endpoint the rank itself for a receive): each Start posts the operation again.
TEST(SimgridTiTest, PersistentRequestsStart) {
  const Trace trace = parse_simgrid_ti(
      "0 Start 1 0 4 1\n0 wait 0 1 0\n0 Start 1 0 4 1\n0 wait 0 1 0\n"
      "1 Start 1 0 8 1\n1 waitall\n1 recv 0 0 1 1\n",
      "t.txt");
  const auto& r0 = trace.ranks[0];
  ASSERT_EQ(ops_of(r0), (std::vector<OpKind>{OpKind::send, OpKind::send}));
  EXPECT_EQ(r0[0].count, 1u);  // 4 bytes of MPI_INT
  EXPECT_EQ(r0[0].peer, 1);
  EXPECT_TRUE(r0[1].in_flight.empty());
  const auto& r1 = trace.ranks[1];
  EXPECT_EQ(r1[0].op, OpKind::recv);  // its endpoint is rank 1 itself: a receive
  EXPECT_EQ(r1[0].peer, 0);           // from any source, matched to rank 0
  EXPECT_EQ(r1[1].msg, r0[1].msg);
}

//! SMPI records no MPI_Cancel: an irecv waited for without a message was cancelled, and is
//! dropped (pending, not blocked); a blocking receive gone past without one stays an error.
TEST(SimgridTiTest, CancelledReceivesAreDropped) {
  const Trace trace =
      parse_simgrid_ti("0 irecv 1 9 1 1\n0 wait 1 0 9\n0 barrier\n1 barrier\n", "t.txt");
  EXPECT_EQ(trace.ranks[0][0].status, OpStatus::pending);
  EXPECT_FALSE(trace.ranks[0][0].blocked);
  EXPECT_EQ(trace.ranks[0][1].status, OpStatus::completed);
}

//! A request still open when its rank finalizes is listed in the header
//! (config.unfinished_requests, FILE:LINE first): one without a message, and both sides of
//! a message neither completed. One a later `test` may have completed is not, nor one whose
//! message the other side completed (released by MPI_Request_free, which TI does not record).
TEST(SimgridTiTest, RequestsOpenAtFinalizeAreListed) {
  const Trace trace = parse_simgrid_ti(
      "0 irecv 1 3 4\n0 isend 1 4 4\n1 irecv 0 4 4\n0 finalize\n1 finalize\n", "t.txt");
  const auto& unfinished = trace.header.config.at("unfinished_requests");
  ASSERT_EQ(unfinished.size(), 3u);
  EXPECT_EQ(unfinished[0],
            "t.txt:1: rank 0 op #0 (irecv from rank 1 tag 3) is still open when the rank "
            "finalizes at line 4: no wait completed it");
  EXPECT_EQ(unfinished[1].get<std::string>().substr(0, 36), "t.txt:2: rank 0 op #1 (isend to rank");
  EXPECT_EQ(unfinished[2].get<std::string>().substr(0, 37), "t.txt:3: rank 1 op #0 (irecv from ran");
  const Trace freed =
      parse_simgrid_ti("0 isend 1 4 4\n0 finalize\n1 recv 0 4 4\n1 finalize\n", "t.txt");
  EXPECT_FALSE(freed.header.config.contains("unfinished_requests"));
  const Trace tested =
      parse_simgrid_ti("0 isend 1 4 4\n0 test\n0 finalize\n1 recv 0 4 4\n", "t.txt");
  EXPECT_FALSE(tested.header.config.contains("unfinished_requests"));
}

}  // namespace
}  // namespace ranklab
