// The stack-overflow report (detail/stack_overflow.hpp). The handler is async-signal-safe:
// it reads this thread's state, does integer arithmetic, and calls write(2) and _exit(2).
#include "emulator/detail/stack_overflow.hpp"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <mutex>

#include <fmt/format.h>

#include "emulator/stack_arena.hpp"

namespace ranklab::detail {
namespace {

// Exit code of a run whose rank failed (RunStatus::rank_failed).
constexpr int kRankFailedExit = 5;
// The handler's own stack: it needs little, but glibc's SIGSTKSZ can be below what a
// dynamic-linker lookup on first call takes.
constexpr std::size_t kAlternateStackBytes = 64 * 1024;

// What the handler needs, formatted beforehand on this thread (the handler may not
// allocate or format).
struct ThreadGuard {
  const StackArena* arena = nullptr;
  char after_rank[192] = {};  // " overflowed its fiber stack of ... \n"
  std::size_t after_rank_size = 0;
};
thread_local ThreadGuard thread_guard;

// This thread's alternate signal stack, mapped by its first guard and kept until the thread
// ends: a cluster thread (cluster_thread.hpp) runs thousands of clusters, and a mapping
// made and removed per cluster changes the process's address space each time.
class AlternateStack {
 public:
  AlternateStack() {
    void* stack = ::mmap(nullptr, kAlternateStackBytes, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (stack == MAP_FAILED) return;  // out of memory: overflows stay bare SIGSEGVs
    stack_t ours{};
    ours.ss_sp = stack;
    ours.ss_size = kAlternateStackBytes;
    if (::sigaltstack(&ours, &previous_) == 0) {
      stack_ = stack;
    } else {
      ::munmap(stack, kAlternateStackBytes);
    }
  }
  ~AlternateStack() {
    if (stack_ == nullptr) return;
    ::sigaltstack(&previous_, nullptr);
    ::munmap(stack_, kAlternateStackBytes);
  }
  AlternateStack(const AlternateStack&) = delete;
  AlternateStack& operator=(const AlternateStack&) = delete;

  bool installed() const noexcept { return stack_ != nullptr; }

 private:
  void* stack_ = nullptr;
  stack_t previous_{};
};

struct sigaction previous_action;  // SIGSEGV's handler before ours, for every other fault
std::once_flag installed;

// Decimal digits of `value` at `out`; returns how many.
std::size_t write_decimal(unsigned long value, char* out) {
  char digits[24];
  std::size_t n = 0;
  do {
    digits[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  for (std::size_t i = 0; i < n; ++i) out[i] = digits[n - 1 - i];
  return n;
}

void forward(int signal, siginfo_t* info, void* context) {
  if (previous_action.sa_flags & SA_SIGINFO) {
    if (previous_action.sa_sigaction != nullptr) previous_action.sa_sigaction(signal, info, context);
    return;
  }
  if (previous_action.sa_handler == SIG_DFL || previous_action.sa_handler == SIG_IGN) {
    // Back to the default action: the faulting instruction runs again and the fault kills
    // the process as it would have without us (an ignored SIGSEGV would loop forever).
    struct sigaction fallback {};
    fallback.sa_handler = SIG_DFL;
    sigemptyset(&fallback.sa_mask);
    ::sigaction(SIGSEGV, &fallback, nullptr);
    return;
  }
  previous_action.sa_handler(signal);
}

void on_segv(int signal, siginfo_t* info, void* context) {
  const ThreadGuard& guard = thread_guard;
  const long rank = guard.arena != nullptr ? guard.arena->rank_of_guard(info->si_addr) : -1;
  if (rank < 0) {
    forward(signal, info, context);
    return;
  }
  constexpr char kBefore[] = "ranklab: rank ";
  char line[sizeof kBefore + 24 + sizeof guard.after_rank];
  std::size_t n = sizeof kBefore - 1;
  std::memcpy(line, kBefore, n);
  n += write_decimal(static_cast<unsigned long>(rank), line + n);
  std::memcpy(line + n, guard.after_rank, guard.after_rank_size);
  n += guard.after_rank_size;
  [[maybe_unused]] const ssize_t written = ::write(STDERR_FILENO, line, n);
  ::_exit(kRankFailedExit);
}

void install_handler() {
  struct sigaction action {};
  action.sa_sigaction = on_segv;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGSEGV, &action, &previous_action);
}

}  // namespace

StackOverflowGuard::StackOverflowGuard(const StackArena& arena) {
  if (!arena.guarded()) return;  // past kMaxGuardedStacks: no guard page to recognise
  const std::size_t kib = arena.stack_size() / 1024;
  const auto end = fmt::format_to_n(
      thread_guard.after_rank, sizeof thread_guard.after_rank - 1,
      " overflowed its fiber stack of {} KiB: run with a larger one (--stack-kib {}, "
      "ClusterOptions::stack_size)\n",
      kib, 2 * kib);
  thread_guard.after_rank_size = end.size < sizeof thread_guard.after_rank
                                     ? end.size
                                     : sizeof thread_guard.after_rank - 1;
  thread_local const AlternateStack alternate_stack;
  if (!alternate_stack.installed()) return;
  std::call_once(installed, install_handler);
  thread_guard.arena = &arena;
}

StackOverflowGuard::~StackOverflowGuard() { thread_guard.arena = nullptr; }

}  // namespace ranklab::detail
