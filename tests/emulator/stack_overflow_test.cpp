// A rank that overflows its fiber stack ends the process with one line naming the rank and
// a larger --stack-kib, and exit code 5 (emulator/detail/stack_overflow.hpp), never a bare
// SIGSEGV.
#include <gtest/gtest.h>

#include <sys/mman.h>

#include "emulator/engine.hpp"

namespace ranklab::testing {
namespace {

// Recursion that no optimisation can turn into a loop: each frame's array is live across
// the call.
[[gnu::noinline]] int recurse(int depth) {
  volatile char frame[256];
  frame[0] = static_cast<char>(depth);
  if (depth == 0) return frame[0];
  const int below = recurse(depth - 1);
  asm volatile("" : : "r"(frame) : "memory");
  return below + frame[0];
}

class StackOverflowDeathTest : public ::testing::TestWithParam<int> {};

//! With one or two worker threads (each has its own signal stack), the overflowing rank is
//! named with its stack size and twice that to use, and the process exits with 5.
TEST_P(StackOverflowDeathTest, NamesTheRankAndALargerStack) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const int threads = GetParam();
  EXPECT_EXIT(
      {
        Engine engine({.world_size = 4, .threads = threads, .stack_size = 64 * 1024});
        (void)engine.run([](RankContext& ctx) {
          if (ctx.rank() == 3) recurse(1 << 20);
        });
      },
      ::testing::ExitedWithCode(5),
      "^ranklab: rank 3 overflowed its fiber stack of 64 KiB: run with a larger one "
      "\\(--stack-kib 128, ClusterOptions::stack_size\\)\n$");
}

INSTANTIATE_TEST_SUITE_P(Threads, StackOverflowDeathTest, ::testing::Values(1, 2));

//! A fault that is not in a guard page is still the process's SIGSEGV.
TEST(StackOverflowDeathTest, OtherFaultsStaySegfaults) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        Engine engine({.world_size = 2});
        (void)engine.run([](RankContext& ctx) {
          // A real fault outside every guard page: a page mapped without access (a store
          // through a null pointer would be caught first by UBSan, not the kernel).
          if (ctx.rank() == 1) {
            void* page = ::mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            *static_cast<volatile int*>(page) = 1;
          }
        });
      },
      ::testing::KilledBySignal(SIGSEGV), "");
}

}  // namespace
}  // namespace ranklab::testing
