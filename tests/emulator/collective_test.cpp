// Native collectives: barrier, all_reduce of every reduce op and element type against
// closed forms, a reduction order that is ascending group rank whatever the arrival order
// (so float results are bitwise identical across policies and threads), and the other
// native collectives through the Communicator with Algorithm::direct.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>
#include <vector>

#include "comm/errors.hpp"
#include "emulator/engine.hpp"
#include "collectives/buffer_range.hpp"
#include "emulator/rank.hpp"
#include "tests/emulator/emulator_test_support.hpp"
#include "tests/support/expect_throw_msg.hpp"

namespace ranklab::testing {
namespace {

// The typed calls take any contiguous range of a buffer type; what they write into must be
// writable and outlive the call (collectives/buffer_range.hpp).
static_assert(SendRange<std::vector<float>> && SendRange<std::array<std::int64_t, 3>>);
static_assert(SendRange<std::span<const double>> && SendRange<const std::vector<std::uint8_t>&>);
static_assert(!SendRange<std::vector<bool>> && !SendRange<std::vector<char>>);
static_assert(RecvRange<std::vector<float>&> && RecvRange<std::span<int>>);
static_assert(!RecvRange<const std::vector<float>&> && !RecvRange<std::span<const int>>);
static_assert(!RecvRange<std::vector<float>>);  // a temporary would lose what arrives

constexpr std::int64_t kStride = 100;
constexpr std::size_t kCount = 7;

// prod's operands: 2 where (rank + i) % 3 == 0, -1 where (rank + i) % 7 == 1, else 1, so
// the product of up to 64 of them is exact in every type.
template <typename T>
T prod_operand(int rank, std::size_t i) {
  const auto k = static_cast<std::size_t>(rank) + i;
  return static_cast<T>(k % 3 == 0 ? 2 : k % 7 == 1 ? -1 : 1);
}

// The closed form of element i of all_reduce(op) over n ranks of x_r[i] = r*kStride + i
// (prod: of prod_operand).
template <typename T>
T expected_all_reduce(ReduceOp op, int n, std::size_t i) {
  const auto ii = static_cast<std::int64_t>(i);
  const std::int64_t sum = kStride * n * (n - 1) / 2 + n * ii;
  switch (op) {
    case ReduceOp::sum:
      return static_cast<T>(sum);
    case ReduceOp::min:
      return static_cast<T>(ii);
    case ReduceOp::max:
      return static_cast<T>((n - 1) * kStride + ii);
    case ReduceOp::avg:
      if constexpr (std::is_integral_v<T>) {
        return static_cast<T>(sum / n);
      } else {
        return static_cast<T>(static_cast<T>(sum) / static_cast<T>(n));
      }
    case ReduceOp::prod: {
      T p = 1;
      for (int r = 0; r < n; ++r) p = static_cast<T>(p * prod_operand<T>(r, i));
      return p;
    }
    case ReduceOp::band:
    case ReduceOp::bor:
    case ReduceOp::bxor:
      if constexpr (std::is_integral_v<T>) {
        T bits = static_cast<T>(ii);
        for (int r = 1; r < n; ++r) {
          const auto x = static_cast<T>(r * kStride + ii);
          bits = static_cast<T>(op == ReduceOp::band  ? bits & x
                                : op == ReduceOp::bor ? bits | x
                                                      : bits ^ x);
        }
        return bits;
      }
      break;
  }
  ADD_FAILURE() << to_string(op) << " has no closed form for " << to_string(data_type_of<T>());
  return T{};
}

// One all_reduce of `op` over T, checked against its closed form; throws naming the case.
template <typename T>
void check_all_reduce(Communicator& world, ReduceOp op) {
  const int me = world.rank(), n = world.size();
  std::vector<T> x = fill<T>(me, kCount, kStride);
  if (op == ReduceOp::prod) {
    for (std::size_t i = 0; i < kCount; ++i) x[i] = prod_operand<T>(me, i);
  }
  world.all_reduce(std::span(x), {.op = op});
  for (std::size_t i = 0; i < kCount; ++i) {
    const T expected = expected_all_reduce<T>(op, n, i);
    if (x[i] != expected) {
      throw Error(fmt::format("rank {}: all_reduce({}, {}) element {} is {}, expected {}", me,
                              to_string(op), to_string(data_type_of<T>()), i, x[i], expected));
    }
  }
}

class CollectiveTest : public ::testing::TestWithParam<ClusterParam> {};

//! all_reduce of sum, prod, min, max and avg over f32, f64, i32 and i64 gives the closed
//! form on every rank.
TEST_P(CollectiveTest, AllReduceMatchesClosedFormForEveryOpAndType) {
  EXPECT_TRUE(run_ok(run_ranks(GetParam().options(), [&](Communicator& world) {
    for (ReduceOp op :
         {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max, ReduceOp::avg}) {
      check_all_reduce<float>(world, op);
      check_all_reduce<double>(world, op);
      check_all_reduce<std::int32_t>(world, op);
      check_all_reduce<std::int64_t>(world, op);
    }
  })));
}

//! band, bor and bxor over i32 and i64 give every rank the fold of the ranks' bits (their
//! high bits differ from rank to rank, their low bits are the element's index).
TEST_P(CollectiveTest, BitwiseReductionsFoldEveryRanksBits) {
  EXPECT_TRUE(run_ok(run_ranks(GetParam().options(), [&](Communicator& world) {
    for (ReduceOp op : {ReduceOp::band, ReduceOp::bor, ReduceOp::bxor}) {
      check_all_reduce<std::int32_t>(world, op);
      check_all_reduce<std::int64_t>(world, op);
    }
  })));
}

// Operands whose sum depends on the order of addition; `big` is the scale of every third one
// (small enough for IEEE half's range).
float order_sensitive(int rank, std::size_t i, float big) {
  const float scale = (rank + static_cast<int>(i)) % 3 == 0 ? big : 1.0f;
  return scale / static_cast<float>(3 + 2 * rank + static_cast<int>(i)) *
         ((rank % 2) != 0 ? -1.0f : 1.0f);
}

// Every rank's all_reduce sum of order_sensitive operands in T is bitwise the left fold
// x_0 + x_1 + ... + x_{n-1}, whatever order the ranks arrive in.
template <typename T>
void expect_ascending_rank_fold(const ClusterParam& param, float big) {
  const int n = param.world;
  constexpr std::size_t kElems = 64;
  const auto x_of = [big](int rank, std::size_t i) {
    return static_cast<T>(order_sensitive(rank, i, big));
  };
  std::vector<T> fold(kElems), reverse(kElems);
  for (std::size_t i = 0; i < kElems; ++i) {
    fold[i] = x_of(0, i);
    for (int r = 1; r < n; ++r) fold[i] = fold[i] + x_of(r, i);
    reverse[i] = x_of(n - 1, i);
    for (int r = n - 2; r >= 0; --r) reverse[i] = reverse[i] + x_of(r, i);
  }
  if (n >= 3) {
    ASSERT_NE(std::memcmp(fold.data(), reverse.data(), kElems * sizeof(T)), 0)
        << "the data must make the order of addition visible in " << to_string(data_type_of<T>());
  }
  EXPECT_TRUE(run_ok(run_ranks(param.options(), [&](Communicator& world) {
    const int me = world.rank();
    // Later ranks reach the call first.
    for (int k = 0; k < (me * 7) % 5; ++k) world.yield();
    std::vector<T> x(kElems);
    for (std::size_t i = 0; i < kElems; ++i) x[i] = x_of(me, i);
    world.all_reduce(std::span(x));
    EXPECT_EQ(std::memcmp(x.data(), fold.data(), kElems * sizeof(T)), 0)
        << "rank " << me << ": " << to_string(data_type_of<T>()) << " x[0] = "
        << static_cast<float>(x[0]) << ", ascending fold " << static_cast<float>(fold[0]);
  })));
}

//! Float sums are reduced in ascending group rank whatever order the ranks arrive in: the
//! result is bitwise the left fold x_0 + x_1 + ... + x_{n-1}, on every rank, so it is
//! identical across policies and thread counts.
TEST_P(CollectiveTest, FloatSumIsAscendingRankFoldBitForBit) {
  expect_ascending_rank_fold<float>(GetParam(), 1.0e7f);
}

//! The same for bfloat16 and IEEE half, each addition computed in float and rounded back as
//! PyTorch's and Gloo's are.
TEST_P(CollectiveTest, SixteenBitFloatSumsAreAscendingRankFoldsBitForBit) {
  expect_ascending_rank_fold<BFloat16>(GetParam(), 300.0f);
  expect_ascending_rank_fold<Float16>(GetParam(), 300.0f);
}

//! No rank leaves a barrier before every member has entered it, barrier after barrier.
TEST_P(CollectiveTest, BarrierReleasesOnlyWhenAllArrived) {
  const int n = GetParam().world;
  std::atomic<int> arrived{0};
  EXPECT_TRUE(run_ok(run_ranks(GetParam().options(), [&](Communicator& world) {
    for (int round = 1; round <= 3; ++round) {
      for (int k = 0; k < world.rank() % 3; ++k) world.yield();
      arrived.fetch_add(1);
      world.barrier();
      EXPECT_GE(arrived.load(), round * n) << "rank " << world.rank() << " round " << round;
    }
  })));
}

//! broadcast, reduce, all_gather, reduce_scatter, gather, scatter and all_to_all with
//! Algorithm::direct move exactly the closed-form data, with the last rank as root.
TEST_P(CollectiveTest, OtherNativeCollectivesMatchClosedForms) {
  const int n = GetParam().world;
  constexpr std::size_t c = 3;
  const auto un = static_cast<std::size_t>(n);
  const int root = n - 1;
  EXPECT_TRUE(run_ok(run_ranks(GetParam().options(), [&](Communicator& world) {
    const int me = world.rank();
    using T = std::int64_t;
    auto v = [](std::int64_t r, std::size_t i) {
      return static_cast<T>(r * kStride) + static_cast<T>(i);
    };

    // broadcast from root.
    std::vector<T> b = me == root ? fill<T>(root, c, kStride) : std::vector<T>(c, -1);
    world.broadcast(std::span(b), {.root = root});
    EXPECT_EQ(b, fill<T>(root, c, kStride)) << "broadcast, rank " << me;

    // reduce (max) to root.
    std::vector<T> r = fill<T>(me, c, kStride);
    world.reduce(as_mutable_buffer(std::span(r)), {.op = ReduceOp::max, .root = root});
    if (me == root) {
      EXPECT_EQ(r, fill<T>(n - 1, c, kStride)) << "reduce";
    }

    // all_gather: chunk j is rank j's input.
    const std::vector<T> mine = fill<T>(me, c, kStride);
    std::vector<T> gathered(c * un, -1);
    world.all_gather(mine, std::span(gathered));
    for (std::size_t j = 0; j < un; ++j) {
      for (std::size_t i = 0; i < c; ++i) {
        EXPECT_EQ(gathered[j * c + i], v(static_cast<std::int64_t>(j), i)) << "all_gather";
      }
    }

    // reduce_scatter (sum): in_r[j*c + i] = r*kStride + j*c + i; out_r[i] sums chunk r.
    std::vector<T> rs_in(c * un);
    for (std::size_t k = 0; k < c * un; ++k) rs_in[k] = v(me, k);
    std::vector<T> rs_out(c, -1);
    world.reduce_scatter(rs_in, std::span(rs_out));
    for (std::size_t i = 0; i < c; ++i) {
      const auto k = static_cast<T>(static_cast<std::size_t>(me) * c + i);
      EXPECT_EQ(rs_out[i], kStride * n * (n - 1) / 2 + n * k) << "reduce_scatter";
    }

    // gather to root; non-roots pass an empty output, as in MPI.
    std::vector<T> g_out(me == root ? c * un : 0, -1);
    world.gather(mine, g_out, {.root = root});
    if (me == root) {
      EXPECT_EQ(g_out, gathered) << "gather";
    }

    // scatter from root; non-roots pass an empty input.
    std::vector<T> s_in;
    if (me == root) {
      for (std::size_t k = 0; k < c * un; ++k)
        s_in.push_back(v(static_cast<std::int64_t>(k / c), k % c));
    }
    std::vector<T> s_out(c, -1);
    world.scatter(s_in, s_out, {.root = root});
    EXPECT_EQ(s_out, mine) << "scatter, rank " << me;

    // all_to_all: in_r[j*c + i] = (r*n + j)*c + i; out_r[j*c + i] = in_j[r*c + i].
    std::vector<T> a_in(c * un), a_out(c * un, -1);
    for (std::size_t j = 0; j < un; ++j) {
      for (std::size_t i = 0; i < c; ++i) {
        a_in[j * c + i] = static_cast<T>((static_cast<std::size_t>(me) * un + j) * c + i);
      }
    }
    world.all_to_all(a_in, a_out);
    for (std::size_t j = 0; j < un; ++j) {
      for (std::size_t i = 0; i < c; ++i) {
        EXPECT_EQ(a_out[j * c + i], static_cast<T>((j * un + static_cast<std::size_t>(me)) * c + i))
            << "all_to_all, rank " << me;
      }
    }
  })));
}

//! Collectives on sub-groups reduce over their members only, and groups of different
//! sizes run side by side.
TEST_P(CollectiveTest, SubGroupAllReduceSumsMembersOnly) {
  const int n = GetParam().world;
  EXPECT_TRUE(run_ok(run_ranks(GetParam().options(), [&](Communicator& world) {
    const int me = world.rank();
    // Pairs {0,1}, {2,3}, ...; with an odd world the last rank is alone.
    std::vector<int> pair = {me - me % 2};
    if (pair[0] + 1 < n) pair.push_back(pair[0] + 1);
    Communicator tp = world.new_group(pair, "tp");
    std::vector<double> x = fill<double>(me, 5);
    tp.all_reduce(std::span(x));
    for (std::size_t i = 0; i < 5; ++i) {
      double expected = 0;
      for (int r : pair) expected += r * 1000.0 + static_cast<double>(i);
      EXPECT_EQ(x[i], expected) << "rank " << me << " in " << tp.name();
    }
    tp.barrier();
    world.barrier();
  })));
}

//! The emulator's own native calls (RankContext::all_reduce, barrier) reduce in place.
TEST_P(CollectiveTest, RankContextNativeAllReduceInPlace) {
  const int n = GetParam().world;
  Engine engine(GetParam().options());
  const RunReport report = engine.run([&](RankContext& ctx) {
    std::vector<std::int32_t> x = fill<std::int32_t>(ctx.rank(), 4, kStride);
    ctx.all_reduce(ctx.world(), as_mutable_buffer(std::span(x)), ReduceOp::sum);
    ctx.barrier(ctx.world());
    for (std::size_t i = 0; i < 4; ++i) {
      EXPECT_EQ(x[i], expected_all_reduce<std::int32_t>(ReduceOp::sum, n, i));
    }
  });
  EXPECT_TRUE(run_ok(report));
}

//! Non-blocking collectives overlap: two all_reduces and a barrier in flight at once
//! complete with their own results, test() polling with yield sees the barrier finish, and
//! a dropped collective handle waits for the collective, as std::future does.
TEST_P(CollectiveTest, NonBlockingCollectivesOverlap) {
  const int n = GetParam().world;
  EXPECT_TRUE(run_ok(run_ranks(GetParam().options(), [&](Communicator& world) {
    const int me = world.rank();
    std::vector<std::int64_t> a = fill<std::int64_t>(me, 4, kStride), b(3, me);
    Work wa = world.iall_reduce(as_mutable_buffer(std::span(a)));
    Work wb = world.iall_reduce(as_mutable_buffer(std::span(b)), {.op = ReduceOp::max});
    Work wbar = world.ibarrier();
    while (!wbar.test()) world.yield();
    wb.wait();
    wa.wait();
    for (std::size_t i = 0; i < 4; ++i) {
      EXPECT_EQ(a[i], expected_all_reduce<std::int64_t>(ReduceOp::sum, n, i));
    }
    EXPECT_EQ(b, std::vector<std::int64_t>(3, n - 1));
    std::vector<std::int64_t> c(2, 1);
    { Work dropped = world.iall_reduce(as_mutable_buffer(std::span(c))); }
    EXPECT_EQ(c, std::vector<std::int64_t>(2, n)) << "complete when its handle is dropped";
  })));
}

INSTANTIATE_TEST_SUITE_P(Worlds, CollectiveTest, ::testing::ValuesIn(cluster_params()),
                         ParamName());

//! A rank's operation is reused for its next collective (Fabric::new_operation resets what
//! the last one's completion changed): a collective posted right after a blocking one is
//! unfinished for the first member to post it, and brings back its own result.
TEST(CollectiveReuseTest, ACollectiveAfterACollectiveStartsUnfinished) {
  ClusterOptions options;
  options.world_size = 2;
  std::array<int, 2> done_at_post{-1, -1};
  EXPECT_TRUE(run_ok(run_ranks(options, [&](Communicator& world) {
    std::vector<std::int64_t> a(1, world.rank() + 1);
    world.all_reduce(as_mutable_buffer(std::span(a)));
    EXPECT_EQ(a[0], 3);
    std::vector<std::int64_t> b(1, 10 * (world.rank() + 1));
    Work wb = world.iall_reduce(as_mutable_buffer(std::span(b)), {.op = ReduceOp::max});
    done_at_post[static_cast<std::size_t>(world.rank())] = wb.test() ? 1 : 0;
    wb.wait();
    EXPECT_EQ(b[0], 20);
  })));
  // The first to post finds the other absent; the second's post completes the call.
  EXPECT_EQ(done_at_post[0] + done_at_post[1], 1);
}

//! Buffers that do not fit the collective, and roots outside the group, are UsageErrors
//! naming the operation and the sizes, thrown before anything is posted.
TEST(CollectiveUsageTest, BadShapesAndRootsAreUsageErrors) {
  ClusterOptions options;
  options.world_size = 3;
  EXPECT_TRUE(run_ok(run_ranks(options, [](Communicator& world) {
    std::vector<float> in(2), out(5);
    EXPECT_THROW_MSG(world.all_gather(in, std::span(out)), UsageError,
                     "all_gather: the output buffer holds 5 elements, expected 6");
    EXPECT_THROW_MSG(world.reduce_scatter(out, std::span(in)), UsageError,
                     "reduce_scatter: the input buffer holds 5 elements, expected 6");
    EXPECT_THROW_MSG(world.broadcast(std::span(in), {.root = 3}), UsageError,
                     "broadcast: root 3 is outside the group of 3 ranks");
    std::vector<double> wrong_type(2);
    EXPECT_THROW_MSG(
        world.all_gather(as_buffer(std::span(in)), as_mutable_buffer(std::span(wrong_type))),
        UsageError, "all_gather: input is f32 but output is f64");
    EXPECT_THROW_MSG(world.all_to_all(as_buffer(std::span(out)), as_mutable_buffer(std::span(out))),
                     UsageError, "not a multiple of the group size 3");
    // Nothing was posted: the world still agrees on its next collective.
    world.all_reduce(std::span(in));
  })));
}

//! A large all_reduce, processed in parallel blocks, still gives the closed form.
TEST(CollectiveScaleTest, LargeBufferAllReduce) {
  ClusterOptions options;
  options.world_size = 64;
  options.threads = 2;
  constexpr std::size_t kElems = 1 << 14;
  EXPECT_TRUE(run_ok(run_ranks(options, [&](Communicator& world) {
    std::vector<float> x(kElems);
    for (std::size_t i = 0; i < kElems; ++i) x[i] = static_cast<float>(world.rank() + (i % 16));
    world.all_reduce(std::span(x));
    for (std::size_t i = 0; i < kElems; ++i) {
      const float expected = static_cast<float>(64 * 63 / 2 + 64 * (i % 16));
      if (x[i] != expected) {
        throw Error(fmt::format("element {} is {}, expected {}", i, x[i], expected));
      }
    }
  })));
}

}  // namespace
}  // namespace ranklab::testing
