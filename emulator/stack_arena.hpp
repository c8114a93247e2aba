// Fiber stacks for a whole run carved from one reserved mapping. One mapping instead of
// one per fiber keeps 65,536 ranks under the kernel's limit on mappings per process
// (vm.max_map_count, 65,530 by default); pages are committed only when touched.
//
// The stacks of one worker thread's ranks (rank r runs on worker r % workers) lie side by
// side, in one block per worker. Interleaved, two workers page-faulting their new fibers'
// stacks in would share page-table pages (one covers 2 MiB: eight 256 KiB stacks), and so
// the kernel's lock on each of them.
//
// The top kHomeBytes of each stack are its rank's home (emulator/detail/rank_home.hpp): the
// fabric keeps the rank's slot and operation there, in the page the rank faults in anyway.
// The fiber's stack starts below it.
//
// A small arena's mapping outlives it: the next arena of the same shape takes it over,
// guard pages and touched stack pages as they are (stack_arena.cpp says why).
#pragma once

#include <cstddef>

#include <boost/context/stack_context.hpp>

namespace ranklab {

class StackArena {
 public:
  /// The bytes at the top of each stack that hold its rank's home, not the fiber's frames.
  static constexpr std::size_t kHomeBytes = 1280;

  /// Reserves `count` stacks of `stack_size` bytes (rounded up to pages), for ranks spread
  /// over `workers` threads round-robin. Below a few thousand stacks each gets a guard page,
  /// so an overflow faults instead of corrupting a neighbour. Throws UsageError if the
  /// address space cannot be reserved.
  StackArena(std::size_t count, std::size_t stack_size, std::size_t workers = 1);
  ~StackArena();

  /// The address space each of `count` stacks of `stack_size` bytes takes (its guard page
  /// included, if it gets one).
  static std::size_t slot_bytes(std::size_t count, std::size_t stack_size);
  StackArena(const StackArena&) = delete;
  StackArena& operator=(const StackArena&) = delete;

  /// A Boost.Context StackAllocator handing out the stack of rank `index`.
  class Allocator {
   public:
    Allocator(StackArena& arena, std::size_t index) : arena_(&arena), index_(index) {}
    boost::context::stack_context allocate();
    void deallocate(boost::context::stack_context&) noexcept {}  // freed with the arena

   private:
    StackArena* arena_;
    std::size_t index_;
  };

  Allocator allocator(std::size_t rank) { return Allocator(*this, rank); }

  /// Rank `rank`'s home: kHomeBytes at the top of its stack, above what its fiber uses,
  /// aligned to 64 bytes. Valid while the arena is.
  std::byte* home(std::size_t rank) const noexcept {
    return base_ + (slot_of(rank) + 1) * slot_size_ - kHomeBytes;
  }

  /// Where rank `rank`'s stack lies: its worker's block, then its place among that
  /// worker's ranks. A permutation of 0 .. count-1.
  std::size_t slot_of(std::size_t rank) const noexcept;
  /// The rank whose stack lies in slot `slot` (slot_of's inverse).
  std::size_t rank_of_slot(std::size_t slot) const noexcept;

  /// The rank whose guard page holds `address`, or -1 (not a guard page, or the arena has
  /// none). Async-signal-safe: the stack-overflow handler calls it.
  long rank_of_guard(const void* address) const noexcept;
  /// The bytes of each stack, its home included.
  std::size_t stack_size() const noexcept { return slot_size_ - guard_size_; }
  bool guarded() const noexcept { return guard_size_ > 0; }

 private:
  std::byte* base_ = nullptr;
  std::size_t count_;
  std::size_t workers_;
  std::size_t slot_size_;
  std::size_t guard_size_;
  std::size_t bytes_;
};

}  // namespace ranklab
