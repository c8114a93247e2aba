// Where the stack arena puts each rank's stack (emulator/stack_arena.hpp): every rank gets
// its own slot, and one worker's ranks lie side by side, in rank order.
#include "emulator/stack_arena.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

namespace ranklab::testing {
namespace {

//! slot_of is a permutation, and worker w's ranks (w, w + workers, ...) fill one block.
TEST(StackArenaTest, OneContiguousBlockPerWorker) {
  for (std::size_t count : {1, 2, 7, 8, 1000}) {
    for (std::size_t workers : {1, 2, 3}) {
      StackArena arena(count, 16 * 1024, workers);
      std::vector<int> used(count, 0);
      std::size_t next_block = 0;  // the first slot of the next worker's block
      for (std::size_t w = 0; w < workers && w < count; ++w) {
        std::size_t expected = next_block;
        for (std::size_t r = w; r < count; r += workers) {
          const std::size_t slot = arena.slot_of(r);
          ASSERT_LT(slot, count) << "count " << count << " workers " << workers << " rank " << r;
          EXPECT_EQ(slot, expected++)
              << "count " << count << " workers " << workers << " rank " << r;
          ++used[slot];
        }
        next_block = expected;
      }
      for (std::size_t s = 0; s < count; ++s) EXPECT_EQ(used[s], 1) << "slot " << s;
      for (std::size_t r = 0; r < count; ++r) EXPECT_EQ(arena.rank_of_slot(arena.slot_of(r)), r);
    }
  }
}

//! Each rank's stack is the arena's slot for it: distinct, and writable end to end.
TEST(StackArenaTest, StacksAreDistinctAndUsable) {
  StackArena arena(5, 16 * 1024, 2);
  std::vector<std::byte*> tops;
  for (std::size_t r = 0; r < 5; ++r) {
    const boost::context::stack_context sctx = arena.allocator(r).allocate();
    auto* top = static_cast<std::byte*>(sctx.sp);
    for (std::byte* p = top - sctx.size; p < top; p += 4096) *p = std::byte{1};
    for (std::byte* other : tops)
      EXPECT_GE(top > other ? top - other : other - top, static_cast<std::ptrdiff_t>(sctx.size));
    tops.push_back(top);
  }
}

//! The page just below each stack is its rank's guard; addresses inside stacks or outside
//! the arena are no guard.
TEST(StackArenaTest, GuardPagesNameTheirRank) {
  StackArena arena(5, 16 * 1024, 2);
  ASSERT_TRUE(arena.guarded());
  for (std::size_t r = 0; r < 5; ++r) {
    const boost::context::stack_context sctx = arena.allocator(r).allocate();
    const auto* bottom = static_cast<const std::byte*>(sctx.sp) - sctx.size;
    EXPECT_EQ(arena.rank_of_guard(bottom - 1), static_cast<long>(r));
    EXPECT_EQ(arena.rank_of_guard(bottom), -1);
    EXPECT_EQ(arena.rank_of_guard(static_cast<const std::byte*>(sctx.sp) - 1), -1);
  }
  int outside = 0;
  EXPECT_EQ(arena.rank_of_guard(&outside), -1);
}

// Rank `rank`'s lowest usable stack byte.
volatile std::byte* bottom_of(StackArena& arena, std::size_t rank) {
  const boost::context::stack_context sctx = arena.allocator(rank).allocate();
  return static_cast<std::byte*>(sctx.sp) - sctx.size;
}

//! An arena of the same shape as one just ended reuses its mapping (explore starts
//! thousands of small clusters: no map, guard splits and unmap each): what the last one
//! wrote is still there (a new mapping would read zero), and its guard pages still fault.
//! An arena of another shape does not get it.
TEST(StackArenaTest, ReusesASmallMappingOfTheSameShape) {
  {
    StackArena arena(5, 16 * 1024, 2);
    *bottom_of(arena, 3) = std::byte{42};
  }
  {
    StackArena other(6, 16 * 1024, 2);  // another shape: a mapping of its own
    const std::byte fresh = *bottom_of(other, 3);
    EXPECT_EQ(fresh, std::byte{0});
  }
  StackArena again(5, 16 * 1024, 2);
  volatile std::byte* bottom = bottom_of(again, 3);
  const std::byte kept = *bottom;
  EXPECT_EQ(kept, std::byte{42});
  EXPECT_DEATH(bottom[-1] = std::byte{1}, "");
}

}  // namespace
}  // namespace ranklab::testing
