// The reduction collectives over the grid: algorithm x world {1..16} x count {0..100003} x
// dtype, every reduce op in one run per case. Results are compared with the naive reference
// (grid.hpp): bitwise for `direct` and for integers, within the derived float tolerance for
// the other algorithms; integer sums also against their closed form.
#include "tests/collectives/grid.hpp"

namespace ranklab::testing {
namespace {

// What one rank saw of one op: the first difference from the reference ("" if none) and a
// hash of its result.
struct Seen {
  std::string error;
  std::size_t hash = 0;
};
using SeenByOp = std::vector<std::vector<Seen>>;  // [op][rank]

SeenByOp make_seen(int world) {
  return SeenByOp(kOps.size(), std::vector<Seen>(static_cast<std::size_t>(world)));
}

// Every rank matched; with `identical`, every rank's result has the same bits.
void expect_clean(const SeenByOp& seen, bool identical) {
  for (std::size_t k = 0; k < seen.size(); ++k) {
    for (std::size_t r = 0; r < seen[k].size(); ++r) {
      EXPECT_EQ(seen[k][r].error, "") << "rank " << r;
      if (identical) {
        EXPECT_EQ(seen[k][r].hash, seen[k][0].hash)
            << to_string(kOps[k]) << ": rank " << r << " differs from rank 0";
      }
    }
  }
}

// The reference itself, for integers: the sum has a closed form.
template <typename T>
void expect_closed_form_sum(int p, std::size_t first, const std::vector<Expected<T>>& sums) {
  if constexpr (std::is_integral_v<T>) {
    for (std::size_t k = 0; k < sums.size(); ++k) {
      ASSERT_EQ(static_cast<std::int64_t>(sums[k].value), int_sum(p, first + k)) << "element " << k;
    }
  }
}

class AllReduceGrid : public ::testing::TestWithParam<GridCase> {};
class ReduceGrid : public ::testing::TestWithParam<GridCase> {};
class ReduceScatterGrid : public ::testing::TestWithParam<GridCase> {};

//! all_reduce: every rank gets the reduction of every op, with identical bits on every rank.
TEST_P(AllReduceGrid, MatchesReference) {
  const GridCase c = GetParam();
  const bool exact = c.algorithm == Algorithm::direct;
  for_each_dtype([&](auto type) {
    using T = typename decltype(type)::type;
    std::vector<std::vector<Expected<T>>> expected;
    for (ReduceOp op : kOps) expected.push_back(references<T>(op, c.world, 0, c.count));
    expect_closed_form_sum<T>(c.world, 0, expected[0]);
    SeenByOp seen = make_seen(c.world);
    run_grid(c, [&](Communicator& comm) {
      for (std::size_t k = 0; k < kOps.size(); ++k) {
        auto data = reduction_inputs<T>(kOps[k], c.world, comm.rank(), c.count);
        comm.all_reduce(std::span<T>(data), {.op = kOps[k], .algorithm = c.algorithm});
        seen[k][static_cast<std::size_t>(comm.rank())] = {
            compare_reduction<T>(kOps[k], std::span<const T>(data), expected[k], exact),
            hash_of(std::span<const T>(data))};
      }
    });
    expect_clean(seen, /*identical=*/true);
  });
}

//! reduce: the root (count mod world, so it varies) gets the reduction; the other ranks'
//! buffers are left as they were.
TEST_P(ReduceGrid, MatchesReferenceAtRoot) {
  const GridCase c = GetParam();
  const bool exact = c.algorithm == Algorithm::direct;
  const int root = static_cast<int>(c.count % static_cast<std::size_t>(c.world));
  for_each_dtype([&](auto type) {
    using T = typename decltype(type)::type;
    std::vector<std::vector<Expected<T>>> expected;
    for (ReduceOp op : kOps) expected.push_back(references<T>(op, c.world, 0, c.count));
    SeenByOp seen = make_seen(c.world);
    run_grid(c, [&](Communicator& comm) {
      for (std::size_t k = 0; k < kOps.size(); ++k) {
        const auto input = reduction_inputs<T>(kOps[k], c.world, comm.rank(), c.count);
        auto data = input;
        comm.reduce(as_mutable_buffer(std::span<T>(data)),
                    {.op = kOps[k], .root = root, .algorithm = c.algorithm});
        auto& mine = seen[k][static_cast<std::size_t>(comm.rank())];
        if (comm.rank() == root) {
          mine.error = compare_reduction<T>(kOps[k], std::span<const T>(data), expected[k], exact);
        } else if (data != input) {
          mine.error = "a non-root buffer changed";
        }
      }
    });
    expect_clean(seen, /*identical=*/false);
  });
}

//! reduce_scatter: rank r gets block r of the reduction (each block `count` elements).
TEST_P(ReduceScatterGrid, MatchesReference) {
  const GridCase c = GetParam();
  const bool exact = c.algorithm == Algorithm::direct;
  const std::size_t total = c.count * static_cast<std::size_t>(c.world);
  for_each_dtype([&](auto type) {
    using T = typename decltype(type)::type;
    SeenByOp seen = make_seen(c.world);
    run_grid(c, [&](Communicator& comm) {
      const auto first = c.count * static_cast<std::size_t>(comm.rank());
      for (std::size_t k = 0; k < kOps.size(); ++k) {
        const auto input = reduction_inputs<T>(kOps[k], c.world, comm.rank(), total);
        std::vector<T> output(c.count);
        comm.reduce_scatter(std::span<const T>(input), std::span<T>(output),
                            {.op = kOps[k], .algorithm = c.algorithm});
        // Each rank checks its own block, so the reference is computed once in all.
        const auto expected = references<T>(kOps[k], c.world, first, c.count);
        seen[k][static_cast<std::size_t>(comm.rank())].error =
            compare_reduction<T>(kOps[k], std::span<const T>(output), expected, exact);
      }
    });
    expect_clean(seen, /*identical=*/false);
  });
}

INSTANTIATE_TEST_SUITE_P(Grid, AllReduceGrid,
                         ::testing::ValuesIn(grid({Algorithm::direct, Algorithm::ring,
                                                   Algorithm::recursive_doubling,
                                                   Algorithm::halving_doubling})),
                         case_name);
INSTANTIATE_TEST_SUITE_P(Grid, ReduceGrid,
                         ::testing::ValuesIn(grid({Algorithm::direct, Algorithm::tree})),
                         case_name);
// 100003 elements per rank's block means world x 100003 per input, and checking it costs
// world^2 x 100003 per op and dtype: worlds up to 5 only (still odd, even and 2^k).
INSTANTIATE_TEST_SUITE_P(Grid, ReduceScatterGrid,
                         ::testing::ValuesIn(grid({Algorithm::direct, Algorithm::ring}, 5)),
                         case_name);

}  // namespace
}  // namespace ranklab::testing
