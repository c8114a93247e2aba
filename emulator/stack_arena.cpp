#include "emulator/stack_arena.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "comm/errors.hpp"

namespace ranklab {
namespace {

// Guard pages split the mapping, one extra kernel mapping per stack.
constexpr std::size_t kMaxGuardedStacks = 16'384;

}  // namespace

StackArena::StackArena(std::size_t count, std::size_t stack_size, std::size_t workers)
    : count_(count), workers_(std::max<std::size_t>(workers, 1)) {
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const bool guarded = count <= kMaxGuardedStacks;
  guard_size_ = guarded ? page : 0;
  slot_size_ = (stack_size + page - 1) / page * page + guard_size_;
  bytes_ = slot_size_ * count_;
  void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    throw UsageError(fmt::format("cannot reserve {} fiber stacks of {} bytes: {}", count,
                                 stack_size, std::strerror(errno)));
  }
  base_ = static_cast<std::byte*>(p);
  if (guarded) {
    for (std::size_t i = 0; i < count_; ++i) ::mprotect(base_ + i * slot_size_, page, PROT_NONE);
  }
}

StackArena::~StackArena() {
  if (base_ != nullptr) ::munmap(base_, bytes_);
}

std::size_t StackArena::slot_of(std::size_t rank) const {
  // Worker w runs ranks w, w + workers, ...: count / workers of them, one more for the
  // first count % workers workers.
  const std::size_t worker = rank % workers_;
  const std::size_t block = worker * (count_ / workers_) + std::min(worker, count_ % workers_);
  return block + rank / workers_;
}

boost::context::stack_context StackArena::Allocator::allocate() {
  boost::context::stack_context sctx;
  // Stacks grow down: the usable top is the end of the slot.
  sctx.size = arena_->slot_size_ - arena_->guard_size_;
  sctx.sp = arena_->base_ + (arena_->slot_of(index_) + 1) * arena_->slot_size_;
  return sctx;
}

}  // namespace ranklab
