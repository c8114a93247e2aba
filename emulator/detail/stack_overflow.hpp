// A rank that runs past its fiber stack is reported, not left to a bare SIGSEGV. Private to
// emulator/.
#pragma once

namespace ranklab {
class StackArena;
}

namespace ranklab::detail {

/// Alive on a worker thread while it runs ranks whose stacks come from `arena`. A fault in
/// one of the arena's guard pages (the page below each stack) is a rank overflowing its
/// stack: the handler writes one line to stderr naming the rank and a larger --stack-kib,
/// and ends the process with exit code 5 (a rank failed). Nothing gentler is possible: the
/// fiber cannot run again, nor unwind, and other ranks may share its thread. Every other
/// fault goes to whatever handled SIGSEGV before. The handler runs on an alternate signal
/// stack of this thread, since the faulting fiber's stack is exhausted: mapped by the
/// thread's first guard, it stays until the thread ends.
class StackOverflowGuard {
 public:
  explicit StackOverflowGuard(const StackArena& arena);
  ~StackOverflowGuard();
  StackOverflowGuard(const StackOverflowGuard&) = delete;
  StackOverflowGuard& operator=(const StackOverflowGuard&) = delete;
};

}  // namespace ranklab::detail
