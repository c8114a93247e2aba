// Payload copies (emulator/detail/copy_bytes.hpp): large disjoint copies are split over the
// CPUs, overlapping ones stay a memmove; both copy every byte exactly, at every size around
// the thresholds. And end to end: a message and a native broadcast of several MiB arrive
// intact.
#include "emulator/detail/copy_bytes.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

#include "tests/emulator/emulator_test_support.hpp"

namespace ranklab::testing {
namespace {

std::vector<std::byte> pattern(std::size_t bytes, std::uint32_t salt) {
  std::vector<std::byte> v(bytes);
  for (std::size_t i = 0; i < bytes; ++i) {
    v[i] = static_cast<std::byte>((i * 2654435761u + salt) >> 13);
  }
  return v;
}

//! Disjoint buffers: every size from empty to past the parallel threshold, odd sizes
//! included, copies exactly and writes nothing beyond the destination.
TEST(CopyBytesTest, DisjointCopiesAreExact) {
  for (std::size_t bytes : {std::size_t{0}, std::size_t{1}, std::size_t{4095},
                            std::size_t{2} << 20, (std::size_t{2} << 20) + 1,
                            (std::size_t{7} << 20) + 12345}) {
    const std::vector<std::byte> src = pattern(bytes, 1);
    std::vector<std::byte> dst = pattern(bytes + 64, 2);
    const std::vector<std::byte> tail(dst.end() - 64, dst.end());
    detail::copy_bytes(dst.data(), src.data(), bytes);
    EXPECT_TRUE(std::equal(src.begin(), src.end(), dst.begin())) << bytes << " bytes";
    EXPECT_TRUE(std::equal(tail.begin(), tail.end(), dst.end() - 64)) << bytes << " bytes";
  }
}

//! Overlapping ranges, forwards and backwards, large enough for the parallel path: the
//! result is memmove's.
TEST(CopyBytesTest, OverlappingCopiesAreMemmove) {
  const std::size_t bytes = std::size_t{3} << 20;
  for (std::ptrdiff_t shift : {std::ptrdiff_t{4096}, std::ptrdiff_t{-4096}}) {
    std::vector<std::byte> buffer = pattern(bytes + 8192, 3);
    std::vector<std::byte> expected = buffer;
    std::byte* src = buffer.data() + 4096;
    std::memmove(expected.data() + 4096 + shift, expected.data() + 4096, bytes);
    detail::copy_bytes(src + shift, src, bytes);
    EXPECT_EQ(buffer, expected) << "shift " << shift;
  }
}

class LargePayloadTest : public ::testing::TestWithParam<ClusterParam> {};

//! A 3 MiB message and a 3 MiB native broadcast arrive intact at every rank, under every
//! policy and thread count.
TEST_P(LargePayloadTest, MessagesAndBroadcastsOfMegabytesArriveIntact) {
  const std::size_t count = (std::size_t{3} << 20) / sizeof(std::int32_t) + 7;
  expect_run_ok(GetParam().options(), [&](Communicator& world) {
    const int me = world.rank();
    const int n = world.size();
    std::vector<std::int32_t> sent(count), received(count, -1);
    std::iota(sent.begin(), sent.end(), me * 1'000'000);
    if (n > 1) {
      const Work send = world.isend(sent, (me + 1) % n, /*tag=*/3);
      world.recv(std::span(received), (me + n - 1) % n, /*tag=*/3);
      EXPECT_EQ(received[0], ((me + n - 1) % n) * 1'000'000);
      EXPECT_EQ(received[count - 1],
                ((me + n - 1) % n) * 1'000'000 + static_cast<std::int32_t>(count - 1));
    }
    std::vector<std::int32_t> data(count);
    if (me == 0) std::iota(data.begin(), data.end(), 5);
    world.broadcast(std::span(data), {.root = 0});
    for (std::size_t i = 0; i < count; i += 4099) {
      ASSERT_EQ(data[i], static_cast<std::int32_t>(i) + 5) << "rank " << me << " element " << i;
    }
    EXPECT_EQ(data[count - 1], static_cast<std::int32_t>(count - 1) + 5);
  });
}

INSTANTIATE_TEST_SUITE_P(Worlds, LargePayloadTest, ::testing::ValuesIn(cluster_params({1, 3, 8})),
                         ParamName());

}  // namespace
}  // namespace ranklab::testing
