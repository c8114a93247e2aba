// Whether a run's ranks can fit in memory, checked before any rank starts. Private to
// emulator/.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ranklab::detail {

/// The least a run of `world` ranks takes, with fiber stacks of `stack_size` bytes.
struct RunMemory {
  std::uint64_t stacks = 0;  ///< address space reserved for the stacks (and guard pages)
  std::uint64_t state = 0;   ///< the fabric's and the schedulers' per-rank state
  std::uint64_t workers = 0;  ///< the worker threads' stacks and malloc arenas
  std::uint64_t touched = 0;  ///< what must be in RAM at least: state, a page of each stack
};
RunMemory estimate_run_memory(int world, std::size_t stack_size, int threads);

/// Throws UsageError, in one line naming the world, the stack size (--stack-kib) and the
/// bytes needed, when the estimate exceeds what this process may still map (RLIMIT_AS,
/// the 47-bit user address space) or the machine's RAM. Runs that would fail later, with
/// ranks half started, fail here instead (exit 1).
void check_run_memory(int world, std::size_t stack_size, int threads);

}  // namespace ranklab::detail
