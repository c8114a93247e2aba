// The data-movement collectives over the grid: algorithm x world {1..16} x count x dtype,
// checked against closed forms built from rank * kStride + i patterns (exact for every
// dtype: no arithmetic happens). Also the barrier, per world and algorithm.
#include <atomic>

#include "tests/collectives/grid.hpp"

namespace ranklab::testing {
namespace {

// Per rank: "" or the first wrong element.
using Errors = std::vector<std::string>;

template <typename T>
std::string first_difference(std::span<const T> got, std::span<const T> want,
                             std::string_view what) {
  if (got.size() != want.size())
    return fmt::format("{}: {} elements, expected {}", what, got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (got[i] != want[i])
      return fmt::format("{} element {}: got {} expected {}", what, i, got[i], want[i]);
  }
  return {};
}

void expect_clean(const Errors& errors) {
  for (std::size_t r = 0; r < errors.size(); ++r) EXPECT_EQ(errors[r], "") << "rank " << r;
}

// all_to_all blocks: element i of the block src sends to dst, unique in [0, p*p*n).
template <typename T>
T exchange_value(int p, int src, int dst, std::size_t n, std::size_t i) {
  return static_cast<T>((static_cast<std::size_t>(src * p + dst)) * n + i);
}

// all_to_all_v's per-pair counts: 0 to n elements, differing in both directions.
std::size_t pair_count(int src, int dst, std::size_t n) {
  return static_cast<std::size_t>((src * 3 + dst) % 4) * n / 3;
}

class BroadcastGrid : public ::testing::TestWithParam<GridCase> {};
class AllGatherGrid : public ::testing::TestWithParam<GridCase> {};
class GatherGrid : public ::testing::TestWithParam<GridCase> {};
class ScatterGrid : public ::testing::TestWithParam<GridCase> {};
class AllToAllGrid : public ::testing::TestWithParam<GridCase> {};
class AllToAllVGrid : public ::testing::TestWithParam<GridCase> {};

int root_of(const GridCase& c) {
  return static_cast<int>(c.count % static_cast<std::size_t>(c.world));
}

//! broadcast: every rank ends with the root's buffer (root = count mod world).
TEST_P(BroadcastGrid, EveryRankGetsTheRootsBuffer) {
  const GridCase c = GetParam();
  const int root = root_of(c);
  for_each_dtype([&](auto type) {
    using T = typename decltype(type)::type;
    Errors errors(static_cast<std::size_t>(c.world));
    const auto want = pattern<T>(root, c.count);
    run_grid(c, [&](Communicator& comm) {
      auto data = comm.rank() == root ? want : pattern<T>(comm.rank(), c.count, 1);
      comm.broadcast(std::span<T>(data), {.root = root, .algorithm = c.algorithm});
      errors[static_cast<std::size_t>(comm.rank())] = first_difference<T>(data, want, "broadcast");
    });
    expect_clean(errors);
  });
}

//! all_gather: block j of every rank's output is rank j's input.
TEST_P(AllGatherGrid, BlockJIsRankJsInput) {
  const GridCase c = GetParam();
  for_each_dtype([&](auto type) {
    using T = typename decltype(type)::type;
    Errors errors(static_cast<std::size_t>(c.world));
    std::vector<T> want;
    for (int j = 0; j < c.world; ++j) {
      const auto block = pattern<T>(j, c.count);
      want.insert(want.end(), block.begin(), block.end());
    }
    run_grid(c, [&](Communicator& comm) {
      const auto input = pattern<T>(comm.rank(), c.count);
      std::vector<T> output(want.size());
      comm.all_gather(std::span<const T>(input), std::span<T>(output), {.algorithm = c.algorithm});
      errors[static_cast<std::size_t>(comm.rank())] =
          first_difference<T>(output, want, "all_gather");
    });
    expect_clean(errors);
  });
}

//! gather: block j of the root's output is rank j's input; other outputs may be empty.
TEST_P(GatherGrid, RootHoldsEveryInput) {
  const GridCase c = GetParam();
  const int root = root_of(c);
  for_each_dtype([&](auto type) {
    using T = typename decltype(type)::type;
    Errors errors(static_cast<std::size_t>(c.world));
    std::vector<T> want;
    for (int j = 0; j < c.world; ++j) {
      const auto block = pattern<T>(j, c.count);
      want.insert(want.end(), block.begin(), block.end());
    }
    run_grid(c, [&](Communicator& comm) {
      const auto input = pattern<T>(comm.rank(), c.count);
      std::vector<T> output(comm.rank() == root ? want.size() : 0);
      comm.gather(as_buffer(std::span<const T>(input)), as_mutable_buffer(std::span<T>(output)),
                  {.root = root, .algorithm = c.algorithm});
      if (comm.rank() == root) {
        errors[static_cast<std::size_t>(comm.rank())] = first_difference<T>(output, want, "gather");
      }
    });
    expect_clean(errors);
  });
}

//! scatter: rank j gets block j of the root's input.
TEST_P(ScatterGrid, RankJGetsBlockJ) {
  const GridCase c = GetParam();
  const int root = root_of(c);
  for_each_dtype([&](auto type) {
    using T = typename decltype(type)::type;
    Errors errors(static_cast<std::size_t>(c.world));
    run_grid(c, [&](Communicator& comm) {
      std::vector<T> input;
      if (comm.rank() == root) {
        for (int j = 0; j < c.world; ++j) {
          const auto block = pattern<T>(j, c.count);
          input.insert(input.end(), block.begin(), block.end());
        }
      }
      std::vector<T> output(c.count);
      comm.scatter(as_buffer(std::span<const T>(input)), as_mutable_buffer(std::span<T>(output)),
                   {.root = root, .algorithm = c.algorithm});
      errors[static_cast<std::size_t>(comm.rank())] =
          first_difference<T>(output, pattern<T>(comm.rank(), c.count), "scatter");
    });
    expect_clean(errors);
  });
}

//! all_to_all: block j of rank i's output is block i of rank j's input.
TEST_P(AllToAllGrid, BlocksAreTransposed) {
  const GridCase c = GetParam();
  const int p = c.world;
  for_each_dtype([&](auto type) {
    using T = typename decltype(type)::type;
    Errors errors(static_cast<std::size_t>(p));
    run_grid(c, [&](Communicator& comm) {
      const int me = comm.rank();
      std::vector<T> input, want;
      for (int j = 0; j < p; ++j) {
        for (std::size_t i = 0; i < c.count; ++i) {
          input.push_back(exchange_value<T>(p, me, j, c.count, i));
          want.push_back(exchange_value<T>(p, j, me, c.count, i));
        }
      }
      std::vector<T> output(input.size());
      comm.all_to_all(as_buffer(std::span<const T>(input)), as_mutable_buffer(std::span<T>(output)),
                      {.algorithm = c.algorithm});
      errors[static_cast<std::size_t>(me)] = first_difference<T>(output, want, "all_to_all");
    });
    expect_clean(errors);
  });
}

//! all_to_all_v: uneven per-pair counts (0 to count elements) arrive packed in rank order.
TEST_P(AllToAllVGrid, UnevenBlocksAreTransposed) {
  const GridCase c = GetParam();
  const int p = c.world;
  for_each_dtype([&](auto type) {
    using T = typename decltype(type)::type;
    Errors errors(static_cast<std::size_t>(p));
    run_grid(c, [&](Communicator& comm) {
      const int me = comm.rank();
      std::vector<T> input, want;
      std::vector<std::size_t> send_counts, recv_counts;
      for (int j = 0; j < p; ++j) {
        send_counts.push_back(pair_count(me, j, c.count));
        recv_counts.push_back(pair_count(j, me, c.count));
        for (std::size_t i = 0; i < send_counts.back(); ++i) {
          input.push_back(exchange_value<T>(p, me, j, c.count, i));
        }
        for (std::size_t i = 0; i < recv_counts.back(); ++i) {
          want.push_back(exchange_value<T>(p, j, me, c.count, i));
        }
      }
      std::vector<T> output(want.size());
      comm.all_to_all_v(as_buffer(std::span<const T>(input)), send_counts,
                        as_mutable_buffer(std::span<T>(output)), recv_counts,
                        {.algorithm = c.algorithm});
      errors[static_cast<std::size_t>(me)] = first_difference<T>(output, want, "all_to_all_v");
    });
    expect_clean(errors);
  });
}

INSTANTIATE_TEST_SUITE_P(Grid, BroadcastGrid,
                         ::testing::ValuesIn(grid({Algorithm::direct, Algorithm::tree})),
                         case_name);
INSTANTIATE_TEST_SUITE_P(Grid, GatherGrid,
                         ::testing::ValuesIn(grid({Algorithm::direct, Algorithm::tree})),
                         case_name);
INSTANTIATE_TEST_SUITE_P(Grid, ScatterGrid,
                         ::testing::ValuesIn(grid({Algorithm::direct, Algorithm::tree})),
                         case_name);
// Block collectives move world x count per rank: 100003 runs on worlds up to 8 only (and
// all_to_all values stay exact in float: p * p * count < 2^24).
INSTANTIATE_TEST_SUITE_P(Grid, AllGatherGrid,
                         ::testing::ValuesIn(grid({Algorithm::direct, Algorithm::ring}, 8)),
                         case_name);
INSTANTIATE_TEST_SUITE_P(Grid, AllToAllGrid,
                         ::testing::ValuesIn(grid({Algorithm::direct, Algorithm::pairwise}, 8)),
                         case_name);
INSTANTIATE_TEST_SUITE_P(Grid, AllToAllVGrid, ::testing::ValuesIn(grid({Algorithm::pairwise}, 8)),
                         case_name);

// The barrier has no data: world x algorithm (count 0), each under its schedule.
class BarrierGrid : public ::testing::TestWithParam<GridCase> {};

//! barrier: no rank leaves before every rank has arrived, three barriers in a row.
TEST_P(BarrierGrid, NoRankLeavesEarly) {
  const GridCase c = GetParam();
  const int world = c.world;
  const Algorithm algorithm = c.algorithm;
  std::atomic<int> arrived{0};
  Errors errors(static_cast<std::size_t>(world));
  run_grid(c, [&](Communicator& comm) {
    for (int round = 1; round <= 3; ++round) {
      arrived.fetch_add(1);
      comm.barrier({.algorithm = algorithm});
      const int seen = arrived.load();
      if (seen < round * world && errors[static_cast<std::size_t>(comm.rank())].empty()) {
        errors[static_cast<std::size_t>(comm.rank())] = fmt::format(
            "left barrier {} when only {} of {} arrivals had happened", round, seen, round * world);
      }
      comm.barrier({.algorithm = algorithm});  // nobody starts the next round early either
    }
  });
  expect_clean(errors);
}

std::vector<GridCase> barrier_grid() {
  const std::vector<Algorithm> algorithms = {Algorithm::direct, Algorithm::dissemination};
  std::vector<GridCase> cases;
  for (std::size_t a = 0; a < algorithms.size(); ++a) {
    for (std::size_t w = 0; w < kGridWorlds.size(); ++w) {
      const GridSchedule& s = grid_schedule(a, w, 0);
      cases.push_back({kGridWorlds[w], 0, algorithms[a], s.threads, s.policy});
    }
  }
  return cases;
}

/// `w13_dissemination_random_7_t2`.
std::string barrier_name(const ::testing::TestParamInfo<GridCase>& info) {
  const GridCase& c = info.param;
  return fmt::format("w{}_{}_{}_t{}", c.world, to_string(c.algorithm), policy_name(c.policy),
                     c.threads);
}

INSTANTIATE_TEST_SUITE_P(Grid, BarrierGrid, ::testing::ValuesIn(barrier_grid()), barrier_name);

}  // namespace
}  // namespace ranklab::testing
