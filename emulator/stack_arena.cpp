#include "emulator/stack_arena.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <vector>

#include "comm/errors.hpp"

namespace ranklab {
namespace {

// Guard pages split the mapping, one extra kernel mapping per stack.
constexpr std::size_t kMaxGuardedStacks = 16'384;

// Small arenas are kept for the next run of the same shape instead of unmapped. `ranklab
// explore` starts thousands of small clusters, one after another on each job: without
// this, each start maps the arena, splits it with a guard page per stack (one mprotect
// each) and faults its stacks' pages in afresh, and each end unmaps it. Those calls take the
// process's address-space lock for writing, which the other jobs' page faults and maps then
// wait for: a cost that grows with the jobs. Only small mappings are kept (what a kept one
// has touched stays resident), and a few of them, one per job running at once.
constexpr std::size_t kKeptBytes = 32u << 20;
constexpr std::size_t kKeptMappings = 16;

struct KeptMapping {
  std::byte* base;
  std::size_t count;
  std::size_t slot_size;
  std::size_t guard_size;
};

// Never destroyed: an arena may end after static destructors ran.
struct Kept {
  std::mutex mutex;
  std::vector<KeptMapping> mappings;
};
Kept& kept() {
  static Kept* const instance = new Kept();
  return *instance;
}

// A kept mapping of exactly this layout (guard pages in place), or nullptr.
std::byte* take_kept(std::size_t count, std::size_t slot_size, std::size_t guard_size) {
  Kept& k = kept();
  const std::lock_guard<std::mutex> lock(k.mutex);
  for (auto it = k.mappings.begin(); it != k.mappings.end(); ++it) {
    if (it->count == count && it->slot_size == slot_size && it->guard_size == guard_size) {
      std::byte* const base = it->base;
      k.mappings.erase(it);
      return base;
    }
  }
  return nullptr;
}

// Keeps the mapping for a later arena; false if it is too large or enough are kept.
bool keep(const KeptMapping& mapping) {
  if (mapping.count * mapping.slot_size > kKeptBytes) return false;
  Kept& k = kept();
  const std::lock_guard<std::mutex> lock(k.mutex);
  if (k.mappings.size() >= kKeptMappings) return false;
  k.mappings.push_back(mapping);
  return true;
}

}  // namespace

std::size_t StackArena::slot_bytes(std::size_t count, std::size_t stack_size) {
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t guard = count <= kMaxGuardedStacks ? page : 0;
  return (stack_size + page - 1) / page * page + guard;
}

StackArena::StackArena(std::size_t count, std::size_t stack_size, std::size_t workers)
    : count_(count), workers_(std::max<std::size_t>(workers, 1)) {
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const bool guarded = count <= kMaxGuardedStacks;
  guard_size_ = guarded ? page : 0;
  slot_size_ = slot_bytes(count, stack_size);
  bytes_ = slot_size_ * count_;
  if (std::byte* kept = take_kept(count_, slot_size_, guard_size_)) {
    base_ = kept;
    return;
  }
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
  if (base_ == nullptr || keep({base_, count_, slot_size_, guard_size_})) return;
  ::munmap(base_, bytes_);
}

std::size_t StackArena::slot_of(std::size_t rank) const noexcept {
  // Worker w runs ranks w, w + workers, ...: count / workers of them, one more for the
  // first count % workers workers.
  const std::size_t worker = rank % workers_;
  const std::size_t block = worker * (count_ / workers_) + std::min(worker, count_ % workers_);
  return block + rank / workers_;
}

std::size_t StackArena::rank_of_slot(std::size_t slot) const noexcept {
  // The first count % workers blocks hold one rank more than the others.
  const std::size_t small = count_ / workers_;
  const std::size_t big_blocks = count_ % workers_;
  const std::size_t in_big = big_blocks * (small + 1);
  const std::size_t worker =
      slot < in_big ? slot / (small + 1) : big_blocks + (slot - in_big) / small;
  const std::size_t index = slot < in_big ? slot % (small + 1) : (slot - in_big) % small;
  return worker + index * workers_;
}

long StackArena::rank_of_guard(const void* address) const noexcept {
  const auto* p = static_cast<const std::byte*>(address);
  if (guard_size_ == 0 || p < base_ || p >= base_ + bytes_) return -1;
  const auto offset = static_cast<std::size_t>(p - base_);
  if (offset % slot_size_ >= guard_size_) return -1;  // inside a stack, not below one
  return static_cast<long>(rank_of_slot(offset / slot_size_));
}

boost::context::stack_context StackArena::Allocator::allocate() {
  boost::context::stack_context sctx;
  // Stacks grow down: the usable top is the end of the slot, less the rank's home.
  sctx.size = arena_->slot_size_ - arena_->guard_size_ - kHomeBytes;
  sctx.sp = arena_->home(index_);
  return sctx;
}

}  // namespace ranklab
