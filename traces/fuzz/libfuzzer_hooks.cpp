// libFuzzer's custom mutation hooks, shared by the fuzzers: each fuzzer defines
// ranklab::fuzz::mutate_input (its format's structure-aware mutation), and libFuzzer's own
// byte mutation stays available to it as LLVMFuzzerMutate.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "traces/fuzz/trace_mutator.hpp"

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size,
                                               std::size_t max_size, unsigned int seed) {
  const std::string mutated = ranklab::fuzz::mutate_input(
      std::string_view(reinterpret_cast<const char*>(data), size), seed, LLVMFuzzerMutate);
  if (mutated.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, mutated.data(), mutated.size());
  return mutated.size();
}

extern "C" std::size_t LLVMFuzzerCustomCrossOver(const std::uint8_t* a, std::size_t a_size,
                                                 const std::uint8_t* b, std::size_t b_size,
                                                 std::uint8_t* out, std::size_t max_out,
                                                 unsigned int seed) {
  const std::string crossed =
      ranklab::fuzz::cross_lines(std::string_view(reinterpret_cast<const char*>(a), a_size),
                                 std::string_view(reinterpret_cast<const char*>(b), b_size), seed);
  const std::size_t size = std::min(crossed.size(), max_out);
  std::memcpy(out, crossed.data(), size);
  return size;
}
