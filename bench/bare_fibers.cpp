// The floor under ranklab's scale runs (issue 30 §2): N bare Boost.Fiber fibers on the same
// stacks the emulator gives its ranks (one StackArena, 256 KiB each by default), each
// started, switched away from once and back, then joined, on one thread with Boost's own
// round-robin scheduler. What that costs on a machine (page faults for each stack's first
// page, the switches, the fibers' control blocks) is what any one-fiber-per-rank design
// pays; bench/compare's scale section runs it beside `ranklab run --scenario allreduce
// --world N` and judges ranklab by the ratio.
//
//   bare_fibers N [STACK_KIB]   prints "bare fibers: N fibers, STACK KiB stacks: S s"
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <boost/fiber/all.hpp>

#include "emulator/stack_arena.hpp"

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: bare_fibers N [STACK_KIB]\n");
    return 2;
  }
  const std::size_t count = std::stoul(argv[1]);
  const std::size_t stack_kib = argc == 3 ? std::stoul(argv[2]) : 256;
  const auto start = std::chrono::steady_clock::now();
  ranklab::StackArena stacks(count, stack_kib * 1024);
  std::vector<boost::fibers::fiber> fibers;
  fibers.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    fibers.emplace_back(std::allocator_arg, stacks.allocator(i),
                        [] { boost::this_fiber::yield(); });
  }
  for (auto& fiber : fibers) fiber.join();
  fibers.clear();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("bare fibers: %zu fibers, %zu KiB stacks: %.3f s\n", count, stack_kib, seconds);
  return 0;
}
