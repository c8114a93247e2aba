// A rank's home at the top of its stack (emulator/detail/rank_home.hpp): the fabric's slot
// and the rank's operation live there, clear of the fiber's frames.
#include "emulator/detail/rank_home.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <memory>

#include "emulator/stack_arena.hpp"

namespace ranklab::testing {
namespace {

bool inside(const void* p, const void* begin, std::size_t size) {
  const auto* b = static_cast<const std::byte*>(begin);
  const auto* q = static_cast<const std::byte*>(p);
  return q >= b && q < b + size;
}

//! Each rank's home is the top of its own slot, above the stack its fiber gets, and the
//! stack its fiber gets ends where the home begins.
TEST(RankHomeTest, HomeIsTheTopOfTheRanksStack) {
  for (std::size_t count : {5, 20'000}) {  // guarded, and past the guarded limit
    StackArena arena(count, 16 * 1024, 2);
    for (std::size_t r : {std::size_t{0}, std::size_t{3}, count - 1}) {
      const boost::context::stack_context sctx = arena.allocator(r).allocate();
      std::byte* home = arena.home(r);
      EXPECT_EQ(static_cast<std::byte*>(sctx.sp), home) << "rank " << r;
      EXPECT_EQ(sctx.size + StackArena::kHomeBytes, arena.stack_size());
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(home + StackArena::kHomeBytes) % 4096, 0u);
      home[0] = std::byte{1};  // writable, end to end
      home[StackArena::kHomeBytes - 1] = std::byte{1};
      if (arena.guarded()) {
        EXPECT_EQ(arena.rank_of_guard(home), -1);
      }
    }
  }
}

struct Block {
  std::byte bytes[400];
};

//! One block at a time goes into the home's room; a second while it is held comes from
//! the heap; once the first is freed the room is used again. A block too large for the
//! room never goes there.
TEST(RankHomeTest, OperationRoomHoldsOneBlockAtATime) {
  StackArena arena(2, 16 * 1024);
  auto* home = ::new (static_cast<void*>(arena.home(1))) detail::RankHome();
  const detail::HomeAllocator<Block> alloc(*home);
  auto first = std::allocate_shared<Block>(alloc);
  EXPECT_TRUE(inside(first.get(), home->operation, sizeof home->operation));
  EXPECT_TRUE(home->operation_busy);
  auto second = std::allocate_shared<Block>(alloc);
  EXPECT_FALSE(inside(second.get(), home, StackArena::kHomeBytes));
  first.reset();
  EXPECT_FALSE(home->operation_busy);
  second.reset();  // a heap block: the room stays free
  EXPECT_FALSE(home->operation_busy);
  auto third = std::allocate_shared<Block>(alloc);
  EXPECT_TRUE(inside(third.get(), home->operation, sizeof home->operation));
  struct Big {
    std::byte bytes[detail::RankHome::kOperationBytes];
  };
  third.reset();
  auto big = std::allocate_shared<Big>(detail::HomeAllocator<Big>(*home));
  EXPECT_FALSE(inside(big.get(), home, StackArena::kHomeBytes));
  EXPECT_FALSE(home->operation_busy);
}

//! The fabric's operation, with allocate_shared's control block, fits in the room: else
//! every rank would take it from the heap again.
TEST(RankHomeTest, AnOperationFitsInTheRoom) {
  StackArena arena(1, 16 * 1024);
  auto* home = ::new (static_cast<void*>(arena.home(0))) detail::RankHome();
  auto op = std::allocate_shared<detail::Operation>(detail::HomeAllocator<detail::Operation>(*home));
  EXPECT_TRUE(inside(op.get(), home->operation, sizeof home->operation));
}

}  // namespace
}  // namespace ranklab::testing
