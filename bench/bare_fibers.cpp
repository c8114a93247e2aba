// The floor under ranklab's scale runs (issue 30 §2): N bare Boost.Fiber fibers on the same
// stacks the emulator gives its ranks (one StackArena, 256 KiB each by default), each
// started, switched away from once and back, then joined, on one thread with Boost's own
// round-robin scheduler. What that costs on a machine (page faults for each stack's first
// page, the switches, the fibers' control blocks) is what any one-fiber-per-rank design
// pays; bench/compare's scale section runs it beside `ranklab run --scenario allreduce
// --world N` and judges ranklab by the ratio.
//
//   bare_fibers N [STACK_KIB]   prints "bare fibers: N fibers, STACK KiB stacks: S s"
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include <boost/fiber/all.hpp>

#include "emulator/stack_arena.hpp"

namespace {

int run(std::size_t count, std::size_t stack_kib) {
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

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: bare_fibers N [STACK_KIB]\n");
    return 2;
  }
  const auto positive = [](const char* text, const char* what) -> std::size_t {
    char* end = nullptr;
    errno = 0;
    const unsigned long long value = std::strtoull(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || value == 0 || text[0] == '-') {
      std::fprintf(stderr, "bare_fibers: %s must be a positive integer, got '%s'\n", what, text);
      std::exit(2);
    }
    return static_cast<std::size_t>(value);
  };
  const std::size_t count = positive(argv[1], "N");
  const std::size_t stack_kib = argc == 3 ? positive(argv[2], "STACK_KIB") : 256;
  if (stack_kib < 16 || stack_kib > (1u << 20)) {
    std::fprintf(stderr, "bare_fibers: STACK_KIB must be 16 to 1048576, got %zu\n", stack_kib);
    return 2;
  }
  try {
    return run(count, stack_kib);
  } catch (const std::exception& e) {  // a StackArena too large for the address space
    std::fprintf(stderr, "bare_fibers: %s\n", e.what());
    return 1;
  }
}
