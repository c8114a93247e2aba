// Fiber stacks for a whole run carved from one reserved mapping. One mapping instead of
// one per fiber keeps 65,536 ranks under the kernel's limit on mappings per process
// (vm.max_map_count, 65,530 by default); pages are committed only when touched.
#pragma once

#include <cstddef>

#include <boost/context/stack_context.hpp>

namespace ranklab {

class StackArena {
 public:
  /// Reserves `count` stacks of `stack_size` bytes (rounded up to pages). Below a few
  /// thousand stacks each gets a guard page, so an overflow faults instead of corrupting
  /// a neighbour. Throws UsageError if the address space cannot be reserved.
  StackArena(std::size_t count, std::size_t stack_size);
  ~StackArena();
  StackArena(const StackArena&) = delete;
  StackArena& operator=(const StackArena&) = delete;

  /// A Boost.Context StackAllocator handing out stack `index` of the arena.
  class Allocator {
   public:
    Allocator(StackArena& arena, std::size_t index) : arena_(&arena), index_(index) {}
    boost::context::stack_context allocate();
    void deallocate(boost::context::stack_context&) noexcept {}  // freed with the arena

   private:
    StackArena* arena_;
    std::size_t index_;
  };

  Allocator allocator(std::size_t index) { return Allocator(*this, index); }

 private:
  std::byte* base_ = nullptr;
  std::size_t count_;
  std::size_t slot_size_;
  std::size_t guard_size_;
  std::size_t bytes_;
};

}  // namespace ranklab
