// The memory check before a run (detail/run_memory.hpp). The estimate is a lower bound:
// the rank programs' own data comes on top, so a run it lets through may still run out
// (then the rank that could not allocate fails the run, exit 5); one it refuses could not
// have started all its ranks.
#include "emulator/detail/run_memory.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <limits>

#include "emulator/detail/fabric_state.hpp"
#include "comm/errors.hpp"
#include "emulator/scheduler.hpp"
#include "emulator/stack_arena.hpp"

namespace ranklab::detail {
namespace {

// x86-64 and AArch64 user space with 4-level page tables.
constexpr std::uint64_t kUserAddressSpace = std::uint64_t{1} << 47;
// Each worker thread maps its stack (glibc: RLIMIT_STACK's size, 8 MiB by default) and,
// at its first malloc, an arena of 64 MiB (glibc's HEAP_MAX_SIZE on 64-bit). Under
// `ulimit -v` these decide whether 65,536 ranks of 16 KiB start (measured: they need
// about 1.22 GB with one worker).
constexpr std::uint64_t kWorkerBytes = (8 + 64) << 20;

std::uint64_t page_size() { return static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)); }

// The machine's RAM, looked up once: a run checks it on every start (explore starts
// thousands of clusters), and sysconf asks the kernel each time.
std::uint64_t physical_memory() {
  static const std::uint64_t bytes =
      static_cast<std::uint64_t>(std::max(::sysconf(_SC_PHYS_PAGES), 0L)) * page_size();
  return bytes;
}

// What this process maps now (/proc/self/statm's first field), 0 if unknown.
std::uint64_t mapped_now() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long long pages = 0;
  const int read = std::fscanf(f, "%llu", &pages);
  std::fclose(f);
  return read == 1 ? pages * page_size() : 0;
}

std::uint64_t saturating_multiply(std::uint64_t a, std::uint64_t b) {
  std::uint64_t out = 0;
  return __builtin_mul_overflow(a, b, &out) ? std::numeric_limits<std::uint64_t>::max() : out;
}

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t out = 0;
  return __builtin_add_overflow(a, b, &out) ? std::numeric_limits<std::uint64_t>::max() : out;
}

std::string human(std::uint64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(units)) {
    value /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} bytes", bytes) : fmt::format("{:.1f} {}", value, units[unit]);
}

}  // namespace

RunMemory estimate_run_memory(int world, std::size_t stack_size, int threads) {
  const auto n = static_cast<std::uint64_t>(std::max(world, 0));
  // Per rank: its fiber's properties and place in a ready queue, the pointers to its home
  // and slot (which, with its mailbox and first operation, live in the stack's top page:
  // detail/rank_home.hpp).
  const std::uint64_t per_rank = 2 * sizeof(void*) + sizeof(RankProperties) + 2 * sizeof(void*);
  RunMemory m;
  // Saturating: world x stack size wrapped 64 bits (4 ranks of 2^62 bytes "needed" 0) and
  // the run went on to crash.
  const std::uint64_t slot = stack_size > kUserAddressSpace
                                 ? std::uint64_t{stack_size}
                                 : StackArena::slot_bytes(static_cast<std::size_t>(n), stack_size);
  m.stacks = saturating_multiply(n, slot);
  m.state = n * per_rank;
  m.workers = static_cast<std::uint64_t>(std::clamp(threads, 1, std::max(world, 1))) * kWorkerBytes;
  m.touched = m.state + n * page_size();
  return m;
}

void check_run_memory(int world, std::size_t stack_size, int threads) {
  const RunMemory need = estimate_run_memory(world, stack_size, threads);
  const std::uint64_t total = saturating_add(need.stacks, saturating_add(need.state, need.workers));
  rlimit as{};
  const bool limited = ::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY;
  // What is mapped already matters only against a limit, or for a run that needs a good
  // part of the address space: no process maps 3/4 of it (ASan's shadow is about 1/8), so a
  // smaller run fits without reading /proc (two system calls and a file per cluster start).
  const bool small = total <= kUserAddressSpace / 4;
  const std::uint64_t mapped = limited || !small ? mapped_now() : 0;
  std::uint64_t can_map = kUserAddressSpace - std::min(mapped, kUserAddressSpace);
  const char* limit = "the user address space";
  if (limited) {
    const std::uint64_t left = as.rlim_cur - std::min<std::uint64_t>(mapped, as.rlim_cur);
    if (left < can_map) {
      can_map = left;
      limit = "its address-space limit (ulimit -v)";
    }
  }
  const std::uint64_t ram = physical_memory();
  const std::string what = fmt::format("world {} with --stack-kib {}", world, stack_size / 1024);
  if (total > can_map) {
    throw UsageError(fmt::format(
        "{} needs at least {} bytes ({}: {} of fiber stacks, {} of rank state, {} for worker "
        "threads), more than the {} this process can still map under {}",
        what, total, human(total), human(need.stacks), human(need.state), human(need.workers),
        human(can_map), limit));
  }
  if (ram > 0 && need.touched > ram) {
    throw UsageError(fmt::format(
        "{} needs at least {} bytes of memory ({}: rank state and a page of each stack), "
        "more than this machine's {}",
        what, need.touched, human(need.touched), human(ram)));
  }
}

}  // namespace ranklab::detail
