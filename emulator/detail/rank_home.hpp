// A rank's fabric state kept at the top of its own fiber stack. Private to emulator/.
//
// Every rank faults in one 4 KiB page of its stack (its top: the whole program of a small
// rank runs in about 2 KiB of it) and, beside it, used to take its fabric slot, mailbox and
// operation from the heap: 880 bytes and two mallocs per rank (bench/RESULTS.md, issue 19
// §3). Placed in the stack page the rank faults in anyway, they cost no memory and no malloc.
// The stack starts below its home.
#pragma once

#include <cstddef>
#include <memory>
#include <new>

#include "emulator/detail/fabric_state.hpp"
#include "emulator/stack_arena.hpp"

namespace ranklab::detail {

/// Lives at StackArena::home(rank), constructed by the fabric. Trivially destructible: the
/// arena's memory outlives the fabric, and an operation held past its rank's slot (by
/// another rank's mailbox, say) may still free its block here.
struct RankHome {
  /// Room for the rank's operation with its shared_ptr control block (allocate_shared).
  static constexpr std::size_t kOperationBytes = 512;

  alignas(std::max_align_t) std::byte operation[kOperationBytes];
  bool operation_busy = false;
  alignas(RankSlot) std::byte slot[sizeof(RankSlot)];

  RankSlot* construct_slot() { return ::new (static_cast<void*>(slot)) RankSlot(); }
};

static_assert(sizeof(RankHome) <= StackArena::kHomeBytes, "a rank's home outgrew its room");

/// Rank `rank`'s home, once the fabric has constructed it there.
inline RankHome& home_of(StackArena& stacks, int rank) {
  return *std::launder(reinterpret_cast<RankHome*>(stacks.home(static_cast<std::size_t>(rank))));
}

/// An allocator for allocate_shared: the one block that fits in the home's operation room
/// while that is free (a rank's usual single operation at a time, reused as RankSlot::spare),
/// the heap otherwise (a rank with several non-blocking operations open).
template <class T>
class HomeAllocator {
 public:
  using value_type = T;

  explicit HomeAllocator(RankHome& home) noexcept : home_(&home) {}
  template <class U>
  HomeAllocator(const HomeAllocator<U>& other) noexcept : home_(other.home()) {}

  T* allocate(std::size_t n) {
    if (!home_->operation_busy && n * sizeof(T) <= RankHome::kOperationBytes &&
        alignof(T) <= alignof(std::max_align_t)) {
      home_->operation_busy = true;
      return reinterpret_cast<T*>(home_->operation);
    }
    return static_cast<T*>(::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t) noexcept {
    if (static_cast<void*>(p) == static_cast<void*>(home_->operation)) {
      home_->operation_busy = false;
    } else {
      ::operator delete(p);
    }
  }

  RankHome* home() const noexcept { return home_; }
  template <class U>
  bool operator==(const HomeAllocator<U>& other) const noexcept {
    return home_ == other.home();
  }

 private:
  RankHome* home_;
};

/// Destroys a slot in its home without freeing it (the arena owns the memory).
struct HomeSlotDeleter {
  void operator()(RankSlot* slot) const noexcept { std::destroy_at(slot); }
};

}  // namespace ranklab::detail
