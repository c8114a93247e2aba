// A run too large for memory is refused before any rank starts, in one line naming the
// world, the stack size and the bytes needed (exit 1); one that runs out of memory while
// its ranks start ends in a report, never in std::terminate (detail/run_memory.hpp).
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <new>
#include <vector>

#include "emulator/engine.hpp"
#include "emulator/detail/run_memory.hpp"
#include "comm/errors.hpp"
#include "tests/support/expect_throw_msg.hpp"

namespace ranklab::testing {
namespace {

std::uint64_t mapped_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  unsigned long long pages = 0;
  if (f != nullptr) {
    if (std::fscanf(f, "%llu", &pages) != 1) pages = 0;
    std::fclose(f);
  }
  return pages * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

// In a death-test child: limits the address space, runs 65,536 ranks of 16 KiB that each
// allocate a little, and exits 0 (ran), 5 (a rank failed) or 1 (refused, message on stderr).
[[noreturn]] void run_under_limit(std::uint64_t limit_bytes) {
  const rlimit limit{limit_bytes, limit_bytes};
  if (::setrlimit(RLIMIT_AS, &limit) != 0) std::_Exit(99);
  try {
    Engine engine({.world_size = 65536, .stack_size = 16 * 1024});
    const RunReport report = engine.run([](RankContext& ctx) {
      std::vector<char> data(4096, static_cast<char>(ctx.rank()));
      ctx.barrier(ctx.world());
    });
    std::_Exit(report.ok() ? 0 : 5);
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    std::_Exit(1);
  }
}

//! A world whose stacks alone exceed the address space is refused when the cluster is
//! made, with what it needs; it used to fail with a bare std::bad_alloc.
TEST(RunMemoryTest, RefusesAWorldLargerThanTheAddressSpace) {
  ClusterOptions o;
  o.world_size = 2147483647;
  EXPECT_THROW_MSG(Engine{o}, UsageError,
                   "world 2147483647 with --stack-kib 256 needs at least ");
  EXPECT_THROW_MSG(Engine{o}, UsageError, "512.0 TiB of fiber stacks");
}

//! Stacks whose total wraps 64 bits are refused too: 4 ranks of 2^62 bytes "needed" 0 bytes,
//! passed the check and crashed the run (issue 28 §4); the estimate now saturates.
TEST(RunMemoryTest, StacksWhoseTotalWrapsAreRefused) {
  ClusterOptions o;
  o.world_size = 4;
  o.stack_size = std::size_t{1} << 62;
  EXPECT_THROW_MSG(Engine{o}, UsageError,
                   "world 4 with --stack-kib 4503599627370496 needs at least "
                   "18446744073709551615 bytes (16.0 EiB: 16.0 EiB of fiber stacks");
  o.world_size = 1;
  o.stack_size = ~std::size_t{0};
  EXPECT_THROW_MSG(Engine{o}, UsageError, "needs at least 18446744073709551615 bytes");
}

//! Under `ulimit -v` too small for the stacks and state, the cluster refuses to start:
//! exit 1 and the limit named (it used to abort in Boost.Fiber's scheduler callback).
TEST(RunMemoryDeathTest, RefusesUnderAnAddressSpaceLimit) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(run_under_limit(1'100'000ull * 1024), ::testing::ExitedWithCode(1),
              "world 65536 with --stack-kib 16 needs at least [0-9]+ bytes .*address-space "
              "limit \\(ulimit -v\\)");
}

//! Just above the estimate, memory runs out somewhere while the ranks start or run: the
//! run still ends in a report (0, 1 or 5), never in std::terminate (it aborted in the
//! scheduler's callbacks, in use_scheduling_algorithm, and on the exceptions' emergency
//! pool).
TEST(RunMemoryDeathTest, RunningOutWhileRanksStartEndsInAReport) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const detail::RunMemory need = detail::estimate_run_memory(65536, 16 * 1024, 1);
  const std::uint64_t estimate = need.stacks + need.state + need.workers;
  for (const std::uint64_t mib : {1, 8, 12, 20}) {
    EXPECT_EXIT(run_under_limit(mapped_bytes() + estimate + (mib << 20)),
                [](int status) {
                  return WIFEXITED(status) &&
                         (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 1 ||
                          WEXITSTATUS(status) == 5);
                },
                "")
        << "limit " << mib << " MiB above the estimate";
  }
}

}  // namespace
}  // namespace ranklab::testing
