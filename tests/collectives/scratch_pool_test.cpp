// The algorithms' scratch pool: leases are distinct while held, reused once given back, and
// the pool grows only when no free buffer fits.
#include "collectives/scratch_pool.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <utility>

namespace ranklab {
namespace {

//! Two leases held at once never share bytes, whatever their sizes.
TEST(ScratchPool, HeldLeasesAreDistinct) {
  ScratchPool pool;
  const ScratchPool::Lease a = pool.take(64);
  const ScratchPool::Lease b = pool.take(64);
  const ScratchPool::Lease c = pool.take(0);  // still a real buffer
  ASSERT_NE(a.data(), nullptr);
  ASSERT_NE(c.data(), nullptr);
  EXPECT_NE(a.data(), b.data());
  EXPECT_NE(a.data(), c.data());
  std::memset(a.data(), 1, 64);
  std::memset(b.data(), 2, 64);
  EXPECT_EQ(static_cast<int>(a.data()[63]), 1);
}

//! A buffer given back is reused by the next call that fits, so a steady loop of calls
//! allocates nothing after the first.
TEST(ScratchPool, GivenBackBuffersAreReused) {
  ScratchPool pool;
  std::byte* first = nullptr;
  {
    const ScratchPool::Lease a = pool.take(1 << 20);
    first = a.data();
  }
  const std::size_t capacity = pool.capacity();
  for (int i = 0; i < 10; ++i) {
    const ScratchPool::Lease again = pool.take(1000);  // smaller: the same buffer serves
    EXPECT_EQ(again.data(), first);
  }
  EXPECT_EQ(pool.capacity(), capacity);
}

//! With several free buffers the smallest that fits is taken; a request larger than every
//! free buffer grows one instead of adding a new one.
TEST(ScratchPool, TakesTheSmallestFitAndGrowsRatherThanAdds) {
  ScratchPool pool;
  std::byte* small = nullptr;
  std::byte* large = nullptr;
  {
    const ScratchPool::Lease s = pool.take(100);
    const ScratchPool::Lease l = pool.take(10'000);
    small = s.data();
    large = l.data();
  }
  EXPECT_EQ(pool.take(50).data(), small);
  EXPECT_EQ(pool.take(5'000).data(), large);
  {
    const ScratchPool::Lease big = pool.take(100'000);
    EXPECT_GE(pool.capacity(), 100'000u + 100u);
    EXPECT_LT(pool.capacity(), 100'000u + 10'000u + 100u + 1u);  // grown, not added
  }
}

//! Moving a lease moves the hold: the moved-from lease gives nothing back twice.
TEST(ScratchPool, MovedLeaseKeepsTheHold) {
  ScratchPool pool;
  ScratchPool::Lease a = pool.take(32);
  std::byte* held = a.data();
  ScratchPool::Lease b = std::move(a);
  EXPECT_EQ(b.data(), held);
  const ScratchPool::Lease c = pool.take(32);
  EXPECT_NE(c.data(), held);  // still leased through b
  b = ScratchPool::Lease();
  EXPECT_EQ(pool.take(32).data(), held);
}

}  // namespace
}  // namespace ranklab
