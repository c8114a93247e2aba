// The NCCL debug log importer on lines written here and on the shipped examples: the line
// reader (prefixes, init and operation lines, other lines skipped), ranks and communicators,
// NCCL groups posted together, which operations never completed, sites at the log line; and
// the one-line errors for malformed or contradictory lines ("FILE:LINE: reason").
#include "traces/nccl_log.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "tests/support/expect_throw_msg.hpp"
#include "traces/detail/nccl_log_line.hpp"
#include "traces/error.hpp"
#include "traces/jsonl.hpp"

namespace ranklab {
namespace {

namespace nccl = detail::nccl;

std::filesystem::path examples() {
  return std::filesystem::path(RANKLAB_SOURCE_DIR) / "traces" / "examples" / "nccl";
}

constexpr const char* kPrefix = "node:7:7 [0] NCCL INFO ";

/// An Init COMPLETE line of ncclCommInitRank, as NCCL 2.30.7 prints it.
std::string init(int rank, int nranks, std::uint64_t comm, int dev = 0, int pid = 7,
                 std::uint64_t id = 0xabc) {
  return fmt::format("node:{}:{} [{}] NCCL INFO ncclCommInitRank comm {:#x} rank {} nranks {} "
                     "cudaDev {} nvmlDev {} busId 1b000 commId {:#x} - Init COMPLETE\n",
                     pid, pid, dev, comm, rank, nranks, dev, dev, id);
}

/// An operation line (ncclEnqueueCheck's INFO).
std::string op(const std::string& name, std::uint64_t op_count, std::uint64_t count, int dtype,
               int reduce, int root, std::uint64_t comm, int nranks, int pid = 7, int dev = 0) {
  return fmt::format("node:{}:{} [{}] NCCL INFO {}: opCount {:x} sendbuff 0x7f0000 recvbuff "
                     "0x7f1000 count {} datatype {} op {} root {} comm {:#x} [nranks={}] stream "
                     "(nil)\n",
                     pid, pid, dev, name, op_count, count, dtype, reduce, root, comm, nranks);
}

Trace import(const std::string& text) { return import_nccl_logs({{"t.log", text}}); }

std::string source_file(const Trace& trace, const TraceEvent& e) {
  return trace.sources.files.at(e.source.file);
}

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

std::vector<NcclLogFile> example(const std::string& name) {
  std::vector<std::filesystem::path> paths;
  for (const auto& item : std::filesystem::directory_iterator(examples() / name)) {
    if (item.path().filename().string().starts_with("nccl.")) paths.push_back(item.path());
  }
  std::sort(paths.begin(), paths.end());
  std::vector<NcclLogFile> files;
  for (const auto& path : paths) files.push_back({path.filename().string(), read(path)});
  return files;
}

//! The three kinds of line: an operation (every field read), an Init COMPLETE (2.30's and
//! 2.26's split lines too), anything else skipped, whatever comes before HOST:PID:TID.
TEST(NcclLineTest, ReadsOperationInitAndOtherLines) {
  const nccl::ParsedLine o = nccl::parse_line(
      "[2026-01-02 10:00:00] gpu-3:4242:4250 [1] NCCL INFO ReduceScatter: opCount 1f sendbuff "
      "0x7f3a00000000 recvbuff (nil) count 512 datatype 9 op 4 root 0 comm 0x55d0c2000000 "
      "[nranks=8] stream 0x55d0c1a3b000\r");
  ASSERT_EQ(o.kind, nccl::LineKind::op);
  EXPECT_EQ(o.process, "gpu-3:4242");
  EXPECT_EQ(o.op.name, "ReduceScatter");
  EXPECT_EQ(o.op.op_count, 0x1fu);
  EXPECT_EQ(o.op.count, 512u);
  EXPECT_EQ(o.op.datatype, 9);
  EXPECT_EQ(o.op.op, 4);
  EXPECT_EQ(o.op.comm, 0x55d0c2000000u);
  EXPECT_EQ(o.op.nranks, 8);

  const nccl::ParsedLine split = nccl::parse_line(
      "[default1]:gpu-3:4242:4250 [1] NCCL INFO ncclCommSplit comm 0x20 rank 1 nranks 2 cudaDev 1 "
      "nvmlDev 1 busId 1c000 parent 0x10 splitCount 3 color 5 key 1 - Init COMPLETE");
  ASSERT_EQ(split.kind, nccl::LineKind::init);
  EXPECT_EQ(split.process, "[default1]:gpu-3:4242");
  EXPECT_EQ(split.init.comm, 0x20u);
  EXPECT_EQ(split.init.rank, 1);
  EXPECT_EQ(split.init.nranks, 2);
  EXPECT_EQ(split.init.cuda_dev, 1);
  EXPECT_EQ(split.init.parent, 0x10u);
  EXPECT_EQ(split.init.split_count, 3);
  EXPECT_EQ(split.init.color, 5);
  EXPECT_FALSE(split.init.comm_id);

  const nccl::ParsedLine old = nccl::parse_line(
      std::string(kPrefix) + "comm 0x10 rank 0 nranks 4 cudaDev 0 busId 1b000 commId 0x77 - Init COMPLETE");
  ASSERT_EQ(old.kind, nccl::LineKind::init);  // 2.18: no function name, no nvmlDev
  EXPECT_EQ(old.init.comm_id, 0x77u);

  for (const char* other :
       {"node:7:7 [0] NCCL INFO Using network Socket",
        "node:7:7 [0] NCCL INFO comm 0x10 rank 0 nRanks 4 nNodes 1 localRanks 4 localRank 0 MNNVL 0",
        "node:7:7 [0] NCCL INFO [Rank 0] ncclCommInitRank comm 0x10 rank 0 nranks 4 cudaDev 0 "
        "nvmlDev 0 busId 1b000 commId 0x77 - Init START",
        "loss 0.25", "", "NCCL version 2.30.7+cuda12.9"}) {
    EXPECT_EQ(nccl::parse_line(other).kind, nccl::LineKind::other) << other;
  }
}

//! The healthy example: four processes on two hosts, the world and its split into two
//! pairs, every operation completed, NCCL groups posted together, sites at the log lines.
TEST(NcclImportTest, HealthyExample) {
  const Trace trace = import_nccl_logs(example("healthy"));
  ASSERT_EQ(trace.header.world_size, 4);
  ASSERT_EQ(trace.header.groups.size(), 3u);
  EXPECT_EQ(trace.header.groups[1].name, "world/split0:color0");
  EXPECT_EQ(trace.header.groups[1].ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(trace.header.groups[2].ranks, (std::vector<int>{2, 3}));
  EXPECT_EQ(trace.header.config["program"], "nccl-log");
  EXPECT_EQ(trace.header.config["nccl_format"], "2.30.7");
  EXPECT_EQ(trace.header.config["processes"], 4);
  EXPECT_GT(trace.header.config["skipped_lines"].get<int>(), 0);
  const std::vector<TraceEvent>& rank0 = trace.ranks[0];
  ASSERT_EQ(rank0.size(), 18u);
  for (const auto& events : trace.ranks) {
    for (const TraceEvent& e : events) EXPECT_EQ(e.status, OpStatus::completed);
  }
  EXPECT_EQ(rank0[0].op, OpKind::broadcast);
  EXPECT_EQ(rank0[0].root, 0);
  EXPECT_EQ(rank0[0].dtype, DataType::f32);
  EXPECT_EQ(rank0[1].op, OpKind::all_reduce);
  EXPECT_EQ(rank0[1].group, 1u);
  EXPECT_EQ(rank0[1].count, 8192u);  // ncclBfloat16 is bf16, element for element
  EXPECT_EQ(rank0[1].dtype, DataType::bf16);
  EXPECT_EQ(rank0[1].site->label, "");  // labelled only where a type travels as bytes
  EXPECT_EQ(rank0[1].site->function, "ncclAllReduce");
  EXPECT_EQ(rank0[1].site->file, "nccl.node-a.4100");
  EXPECT_EQ(rank0[1].site->line, 12u);
  // The pipeline exchange is one NCCL group: the receive is posted with the send open.
  EXPECT_EQ(rank0[5].op, OpKind::send);
  EXPECT_EQ(rank0[5].peer, 2);
  EXPECT_EQ(rank0[6].op, OpKind::recv);
  EXPECT_EQ(rank0[6].in_flight, (std::vector<std::uint64_t>{5}));
  EXPECT_TRUE(rank0[6].msg.valid());
  EXPECT_EQ(rank0[7].in_flight, (std::vector<std::uint64_t>{}));
  // The all-to-all's send to self is matched by its own receive.
  EXPECT_EQ(rank0[9].op, OpKind::send);
  EXPECT_EQ(rank0[9].peer, 0);
  EXPECT_EQ(rank0[10].msg, (MessageId{0, 9}));
  // It survives the JSONL round trip.
  std::stringstream text;
  write_trace(text, trace);
  EXPECT_EQ(read_trace(text, "again"), trace);
}

//! One interleaved file of every process's lines is the same job as the per-process files.
TEST(NcclImportTest, InterleavedFileIsTheSameJob) {
  Trace one = import_nccl_logs({{"job.log", read(examples() / "interleaved" / "job.log")}});
  Trace split = import_nccl_logs(example("missing_rank"));
  EXPECT_EQ(one.header.config["logs"], 1);
  EXPECT_EQ(one.header.config["processes"], 4);
  EXPECT_EQ(one.header.groups, split.header.groups);
  for (Trace* trace : {&one, &split}) {  // the sites name other files and lines
    for (auto& events : trace->ranks) {
      for (TraceEvent& e : events) e.site = CallSite{};
    }
  }
  EXPECT_EQ(one.ranks, split.ranks);
}

//! A hung job's logs go on past the hang (NCCL prints at enqueue): the collective rank 3
//! never enqueued never completed, and what the others enqueued behind it on the same
//! communicator never ran: left out.
TEST(NcclImportTest, MissingRankLeavesTheRestOut) {
  const Trace trace = import_nccl_logs(example("missing_rank"));
  for (int r = 0; r < 3; ++r) {
    const auto& events = trace.ranks[static_cast<std::size_t>(r)];
    ASSERT_EQ(events.size(), 5u) << r;
    for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(events[i].status, OpStatus::completed) << r << i;
    EXPECT_EQ(events[4].status, OpStatus::pending) << r;
    EXPECT_EQ(events[4].coll_seq, 3);
    EXPECT_TRUE(events[4].blocked);
  }
  ASSERT_EQ(trace.ranks[3].size(), 4u);
  for (const TraceEvent& e : trace.ranks[3]) EXPECT_EQ(e.status, OpStatus::completed);
  EXPECT_EQ(trace.header.config["left_out_after_pending"], 3);  // the all_gathers behind it
}

//! A collective whose calls differ never completed, and what followed on its communicator
//! never ran; another communicator's operations, before and after it, did.
TEST(NcclImportTest, MismatchedCollectiveIsPending) {
  const Trace trace = import_nccl_logs(example("count_mismatch"));
  EXPECT_EQ(trace.ranks[3][4].count, 1000u);
  EXPECT_EQ(trace.ranks[3][4].status, OpStatus::pending);
  EXPECT_EQ(trace.ranks[0][4].status, OpStatus::pending);
  ASSERT_EQ(trace.ranks[0].size(), 6u);
  EXPECT_EQ(trace.ranks[0][5].group, 1u);  // the last TP all_reduce
  EXPECT_EQ(trace.ranks[0][5].status, OpStatus::completed);
  EXPECT_EQ(trace.ranks[0][1].status, OpStatus::completed);
}

//! A send without its receive never completed; nor did the receive NCCL grouped with it,
//! nor the peer's send that receive was to take.
TEST(NcclImportTest, UnmatchedSendIsPendingWithItsGroup) {
  const std::string text = init(0, 2, 0x10) + init(1, 2, 0x20, 0, 8) +
                           op("Send", 0, 4, 7, 0, 1, 0x10, 2) + op("Recv", 0, 4, 7, 0, 1, 0x10, 2) +
                           op("Send", 0, 4, 7, 0, 0, 0x20, 2, 8) + op("AllReduce", 1, 4, 7, 0, 0, 0x20, 2, 8);
  const Trace trace = import(text);
  ASSERT_EQ(trace.ranks[0].size(), 2u);
  EXPECT_EQ(trace.ranks[0][0].status, OpStatus::pending);
  EXPECT_EQ(trace.ranks[0][1].status, OpStatus::pending);
  EXPECT_FALSE(trace.ranks[0][1].msg.valid());
  ASSERT_EQ(trace.ranks[1].size(), 1u);  // its all_reduce behind the send never ran
  EXPECT_EQ(trace.ranks[1][0].status, OpStatus::pending);
  EXPECT_EQ(trace.ranks[0][1].source.line, 4u);
  EXPECT_EQ(source_file(trace, trace.ranks[0][1]), "t.log");
}

//! A peer or root without a log is the world rank it is (a send to it indexed a device -1:
//! found by the fuzzer).
TEST(NcclImportTest, PeerAndRootWithoutALog) {
  const std::string text = init(0, 3, 0x10) + op("Send", 0, 4, 7, 0, 2, 0x10, 3) +
                           op("Broadcast", 1, 4, 7, 0, 1, 0x10, 3);
  const Trace trace = import(text);
  ASSERT_EQ(trace.ranks[0].size(), 1u);  // the broadcast behind the stuck send never ran
  EXPECT_EQ(trace.ranks[0][0].peer, 2);
  EXPECT_EQ(trace.ranks[0][0].status, OpStatus::pending);
  EXPECT_EQ(trace.header.config["ranks_without_log"], nlohmann::json::array({1, 2}));
  const Trace root = import(init(0, 2, 0x10) + op("Broadcast", 0, 4, 7, 0, 1, 0x10, 2));
  EXPECT_EQ(root.ranks[0][0].root, 1);
}

//! An address a destroyed communicator held names the communicator initialized there next,
//! from its Init COMPLETE line on (the reader remembers the last address an operation named).
TEST(NcclImportTest, ReusedCommAddressNamesTheNewCommunicator) {
  const Trace trace = import(init(0, 1, 0x10) + op("AllReduce", 0, 4, 7, 0, 0, 0x10, 1) +
                             init(0, 1, 0x10, 0, 7, 0xdef) + op("AllReduce", 0, 4, 7, 0, 0, 0x10, 1) +
                             op("AllReduce", 1, 4, 7, 0, 0, 0x10, 1));
  ASSERT_EQ(trace.ranks[0].size(), 3u);
  EXPECT_EQ(trace.ranks[0][0].group, 0u);
  EXPECT_EQ(trace.ranks[0][1].group, 1u);
  EXPECT_EQ(trace.ranks[0][2].group, 1u);
  EXPECT_EQ(trace.header.groups.at(1).name, "commId:0xdef");
}

//! NCCL's 16-bit floats are ranklab's bf16 and f16, element for element; a type ranklab has
//! no name for (uint32, fp8) travels as bytes and its site's label names NCCL's type.
TEST(NcclImportTest, DatatypesMapToRanklabsOrTravelAsLabelledBytes) {
  const Trace trace = import(init(0, 1, 0x10) + op("AllReduce", 0, 10, 6, 0, 0, 0x10, 1) +
                             op("AllReduce", 1, 10, 9, 0, 0, 0x10, 1) +
                             op("AllReduce", 2, 10, 3, 0, 0, 0x10, 1) +
                             op("AllReduce", 3, 10, 10, 0, 0, 0x10, 1));
  ASSERT_EQ(trace.ranks[0].size(), 4u);
  EXPECT_EQ(trace.ranks[0][0].dtype, DataType::f16);
  EXPECT_EQ(trace.ranks[0][0].count, 10u);
  EXPECT_EQ(trace.ranks[0][1].dtype, DataType::bf16);
  EXPECT_EQ(trace.ranks[0][1].count, 10u);
  EXPECT_EQ(trace.ranks[0][1].site->label, "");
  EXPECT_EQ(trace.ranks[0][2].dtype, DataType::u8);
  EXPECT_EQ(trace.ranks[0][2].count, 40u);
  EXPECT_EQ(trace.ranks[0][2].site->label, "10 x ncclUint32");
  EXPECT_EQ(trace.ranks[0][3].count, 10u);
  EXPECT_EQ(trace.ranks[0][3].site->label, "10 x ncclFloat8e4m3");
  EXPECT_EQ(trace.header.version, "1.4");  // which has the 16-bit floats
  EXPECT_EQ(import(init(0, 1, 0x10) + op("AllReduce", 0, 10, 7, 0, 0, 0x10, 1)).header.version,
            "1.2");
}

//! Bad input is one line naming the log and line.
TEST(NcclImportTest, MalformedLinesNameFileAndLine) {
  const std::string w = init(0, 1, 0x10);
  const struct {
    std::string text;
    std::string message;
  } cases[] = {
      {w + op("AllReduce", 0, 4, 12, 0, 0, 0x10, 1),
       "t.log:2: datatype 12 is not one of NCCL 2.30.7's (0 ncclInt8 to 11 ncclFloat8e5m2)"},
      {w + op("AllReduce", 0, 4, 7, -1, 0, 0x10, 1), "t.log:2: op -1 is not an NCCL reduction"},
      {w + op("AllReduce", 0, 4, 7, 0, 0, 0x99, 1),
       "t.log:2: comm 0x99 has no Init COMPLETE line before it in process node:7"},
      {w + op("AllReduce", 0, 4, 7, 0, 0, 0x10, 2), "t.log:2: [nranks=2], but comm 0x10 has 1 ranks"},
      {w + op("PutSignal", 0, 4, 7, 0, 0, 0x10, 1), "t.log:2: NCCL operation 'PutSignal' cannot be replayed"},
      {w + op("Broadcast", 0, 4, 7, 0, 3, 0x10, 1), "t.log:2: root 3 is not a rank of the communicator's 1"},
      {w + op("Send", 0, 4, 7, 0, -1, 0x10, 1), "t.log:2: root -1 is not a rank"},
      {w + "node:7:7 [0] NCCL INFO AllReduce: opCount zz sendbuff", "t.log:2: opCount is not a number: 'zz'"},
      {w + "node:7:7 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x2 count 4",
       "t.log:2: the line ends before 'datatype'"},
      {w + "node:7:7 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x2 count -4 "
           "datatype 7 op 0 root 0 comm 0x10 [nranks=1] stream (nil)",
       "t.log:2: count is not a number: '-4'"},
      {w + "node:7:7 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x2 count 4 "
           "datatype 7 op 0 root 0 comm 0x10 nranks=1 stream (nil)",
       "t.log:2: expected [nranks=N], got 'nranks=1'"},
      {"NCCL INFO AllReduce: opCount 0 sendbuff", "t.log:1: no '[DEV] ' before 'NCCL INFO'"},
      {std::string(kPrefix) + "ncclCommInitRank comm 0x10 rank 4 nranks 4 cudaDev 0 - Init COMPLETE",
       "t.log:1: rank 4 is not in [0, nranks 4)"},
      {std::string(kPrefix) + "comm 0x10 rank 0 nranks 4 cudaDev 0 busId 1b000 - Init COMPLETE",
       "t.log:1: an Init COMPLETE line with neither commId nor parent"},
      {w + std::string(kPrefix) + "ncclCommSplit comm 0x20 rank 0 nranks 1 cudaDev 0 parent 0x30 "
           "childCount 0 color 0 key 0 - Init COMPLETE",
       "t.log:2: parent 0x30 has no Init COMPLETE line before it in process node:7"},
      {w + init(0, 2, 0x20, 0, 7, 0xabc), "t.log:2: the communicator has nranks 2 here but 1 at t.log:1"},
      {w + init(0, 1, 0x20, 0, 8), "t.log:2: rank 0 of the communicator first initialized at t.log:1 is "
                                   "already process node:7 device 0"},
      {init(0, 2, 0x10) + init(1, 2, 0x20), "t.log:2: process node:7 device 0 is already rank 0 "
                                            "of the communicator first initialized at t.log:1"},
      {"loss 0.25\n", "t.log: no NCCL 'Init COMPLETE' line"},
      {init(0, 2, 0x10) + init(1, 2, 0x20, 0, 8) + init(0, 1, 0x30, 0, 9, 0xdef),
       "t.log:3: process node:9 device 0 is not a rank of the world communicator"},
  };
  // The same rank initialized again at another address (the old one destroyed) is no error.
  EXPECT_NO_THROW((void)import(w + init(0, 1, 0x20)));
  for (const auto& c : cases) {
    EXPECT_THROW_MSG(import(c.text), TraceError, c.message);
    try {
      (void)import(c.text);
    } catch (const TraceError& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  }
}

//! A sub-communicator with operations whose members are not all in the logs: its one
//! unknown member is the world's one rank without a log; with more, which is which cannot be
//! told: said, with where it was initialized.
TEST(NcclImportTest, SubCommunicatorWithoutEveryMember) {
  const std::string one = init(0, 3, 0x10) + init(1, 3, 0x20, 0, 8) +
                          init(0, 2, 0x30, 0, 7, 0xdef) + op("AllReduce", 0, 4, 7, 0, 0, 0x30, 2);
  const Trace trace = import(one);
  ASSERT_EQ(trace.header.groups.size(), 2u);
  EXPECT_EQ(trace.header.groups[1].ranks, (std::vector<int>{0, 2}));
  EXPECT_EQ(trace.header.config["ranks_without_log"], nlohmann::json::array({2}));
  const std::string two = init(0, 4, 0x10) + init(1, 4, 0x20, 0, 8) +
                          init(0, 2, 0x30, 0, 7, 0xdef) + op("AllReduce", 0, 4, 7, 0, 0, 0x30, 2);
  EXPECT_THROW_MSG(import(two), TraceError,
                   "t.log:3: communicator commId:0xdef has 2 ranks, but the logs initialize only 1 "
                   "of them: give every rank's log");
}

}  // namespace
}  // namespace ranklab
