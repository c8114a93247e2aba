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
  EXPECT_EQ(trace.header.version, "1.2");
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
        BadCase{"Unknown", "0 init\n0 waitany 2\n",
                "t.txt:2: unknown or unsupported action 'waitany'"},
        BadCase{"MissingArgs", "0 send 1 0\n1 init\n",
                "t.txt:1: send needs DST TAG COUNT [DTYPE] (got 2 arguments)"},
        BadCase{"CountNotInteger", "0 send 1 0 2.5 0\n1 recv 0 0 2 0\n",
                "t.txt:1: count must be an integer, got '2.5'"},
        BadCase{"CountTooLarge", "0 send 1 0 281474976710657\n1 init\n",
                "t.txt:1: count 281474976710657 out of range [0, 2^48]"},
        BadCase{"PeerOutside", "0 send 5 0 1\n1 init\n",
                "t.txt:1: destination 5 is outside the world of 2 ranks"},
        BadCase{"NegativeTag", "0 send 1 -2 1\n1 init\n", "t.txt:1: tag -2 out of range"},
        BadCase{"NegativeCompute", "0 compute -1\n",
                "t.txt:1: FLOPs must be a number >= 0, got '-1'"},
        BadCase{"NegativeDatatype", "0 send 0 0 1 -1\n",
                "t.txt:1: datatype -1 is not an index of SMPI's table"},
        BadCase{"UnequalCounts", "0 allgatherv 1 1 2 0 0\n1 allgatherv 1 1 2 0 0\n",
                "t.txt:1: allgatherv with unequal counts is not supported"},
        BadCase{"SendNeverReceived", "0 send 1 0 4\n0 barrier\n1 barrier\n",
                "t.txt:1: rank 0 sends 4 x u8 to rank 1 tag 0 and no receive matches it, yet rank "
                "0 went on past it"},
        BadCase{"ReceiveNeverSent", "0 recv 1 3 4\n0 finalize\n1 init\n",
                "t.txt:1: rank 0 receives from rank 1 tag 3 and no send matches it, yet rank 0 "
                "went on past it"},
        BadCase{"CollectiveSkipped", "0 barrier\n0 compute 1\n1 compute 1\n",
                "t.txt:1: barrier #0 of the world is reached by 1 of 2 ranks, yet rank 0 went on "
                "past it"}),
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
                   (dir / "trace.txt").string() + ":2: cannot open '" +
                       (dir / "files" / "rank-2.txt").string() + "'");
  std::ofstream(dir / "files" / "rank-2.txt") << "1 init\n1 bogus\n";
  EXPECT_THROW_MSG(
      read_simgrid_ti(dir.path()), TraceError,
      (dir / "files" / "rank-2.txt").string() + ":2: unknown or unsupported action 'bogus'");
}

}  // namespace
}  // namespace ranklab
