// In-place calls, as torch and MPI_IN_PLACE allow them: an input that is the caller's own
// block of the output (all_gather, gather), an output that is its own block of the input
// (reduce_scatter, scatter), or one buffer for both (all_to_all). Every algorithm must give
// what the out-of-place call gives.
#include "tests/collectives/grid.hpp"

namespace ranklab::testing {
namespace {

constexpr std::size_t kBlock = 5;

std::span<std::int64_t> block_of(std::vector<std::int64_t>& v, int j) {
  return std::span<std::int64_t>(v).subspan(static_cast<std::size_t>(j) * kBlock, kBlock);
}

class InPlaceTest : public ::testing::TestWithParam<int> {};

//! all_gather and gather with the input inside the output.
TEST_P(InPlaceTest, GatherIntoOwnBlock) {
  const int p = GetParam(), root = p - 1;
  for (Algorithm a : {Algorithm::direct, Algorithm::ring, Algorithm::tree}) {
    run_grid(p, [&](Communicator& comm) {
      std::vector<std::int64_t> all(kBlock * static_cast<std::size_t>(p), -1), want;
      for (int j = 0; j < p; ++j) {
        const auto b = pattern<std::int64_t>(j, kBlock);
        want.insert(want.end(), b.begin(), b.end());
      }
      const auto mine = pattern<std::int64_t>(comm.rank(), kBlock);
      std::copy(mine.begin(), mine.end(), block_of(all, comm.rank()).begin());
      const auto in = as_buffer(block_of(all, comm.rank()));
      if (a != Algorithm::tree) {
        comm.all_gather(in, as_mutable_buffer(std::span(all)), {.algorithm = a});
        EXPECT_EQ(all, want) << to_string(a) << " rank " << comm.rank();
      }
      if (a != Algorithm::ring) {
        std::vector<std::int64_t> out(comm.rank() == root ? all.size() : 0, -1);
        if (comm.rank() == root) std::copy(mine.begin(), mine.end(), block_of(out, root).begin());
        const auto gather_in =
            comm.rank() == root ? as_buffer(block_of(out, root)) : as_buffer(std::span(mine));
        comm.gather(gather_in, as_mutable_buffer(std::span(out)), {.root = root, .algorithm = a});
        if (comm.rank() == root) {
          EXPECT_EQ(out, want) << to_string(a);
        }
      }
    });
  }
}

//! reduce_scatter and scatter with the output inside the input.
TEST_P(InPlaceTest, ScatterFromOwnBlock) {
  const int p = GetParam(), root = 0;
  for (Algorithm a : {Algorithm::direct, Algorithm::ring, Algorithm::tree}) {
    run_grid(p, [&](Communicator& comm) {
      const int me = comm.rank();
      std::vector<std::int64_t> all;
      for (int j = 0; j < p; ++j) {
        const auto b = pattern<std::int64_t>(j, kBlock);
        all.insert(all.end(), b.begin(), b.end());
      }
      if (a != Algorithm::tree) {
        auto data = all;
        comm.reduce_scatter(as_buffer(std::span(data)), as_mutable_buffer(block_of(data, me)),
                            {.algorithm = a});
        auto want = pattern<std::int64_t>(me, kBlock);
        for (auto& x : want) x *= p;
        EXPECT_TRUE(std::equal(want.begin(), want.end(), block_of(data, me).begin()))
            << to_string(a) << " rank " << me;
      }
      if (a != Algorithm::ring) {
        auto data = all;
        std::vector<std::int64_t> own(kBlock);
        const auto out = me == root ? as_mutable_buffer(block_of(data, root))
                                    : as_mutable_buffer(std::span(own));
        comm.scatter(as_buffer(std::span(data)), out, {.root = root, .algorithm = a});
        const auto got = me == root ? std::vector<std::int64_t>(block_of(data, root).begin(),
                                                                block_of(data, root).end())
                                    : own;
        EXPECT_EQ(got, pattern<std::int64_t>(me, kBlock)) << to_string(a) << " rank " << me;
      }
    });
  }
}

//! all_to_all with one buffer for input and output (pairwise; direct refuses, below).
TEST_P(InPlaceTest, AllToAllInOneBuffer) {
  const int p = GetParam();
  for (Algorithm a : {Algorithm::pairwise}) {
    run_grid(p, [&](Communicator& comm) {
      std::vector<std::int64_t> data, want;
      for (int j = 0; j < p; ++j) {
        for (std::size_t i = 0; i < kBlock; ++i) {
          data.push_back(comm.rank() * 1000 + j * 10 + static_cast<std::int64_t>(i));
          want.push_back(j * 1000 + comm.rank() * 10 + static_cast<std::int64_t>(i));
        }
      }
      comm.all_to_all(as_buffer(std::span(data)), as_mutable_buffer(std::span(data)),
                      {.algorithm = a});
      EXPECT_EQ(data, want) << to_string(a) << " rank " << comm.rank();
    });
  }
}

//! The fabric's native all_to_all cannot run in place: refused rather than wrong.
TEST(InPlace, DirectAllToAllInOneBufferIsRefused) {
  const RunReport report = run_ranks(ClusterOptions{.world_size = 2}, [](Communicator& comm) {
    std::vector<float> data(4);
    comm.all_to_all(as_buffer(std::span(data)), as_mutable_buffer(std::span(data)));
  });
  EXPECT_EQ(report.status, RunStatus::rank_failed);
  EXPECT_NE(report.details.find("all_to_all in place runs only with algorithm pairwise"),
            std::string::npos)
      << report.details;
}

INSTANTIATE_TEST_SUITE_P(Worlds, InPlaceTest, ::testing::Values(1, 2, 3, 5, 8),
                         [](const ::testing::TestParamInfo<int>& world) {
                           return "w" + std::to_string(world.param);
                         });

}  // namespace
}  // namespace ranklab::testing
