#include "cli/memory_flag.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "emulator/replay.hpp"

namespace ranklab::cli {

MemoryLimit memory_limit(std::uint64_t mib) {
  if (mib == 0) {
    const std::uint64_t bytes = default_replay_memory_limit();
    return {bytes, fmt::format("{}, half of this machine's memory (--max-memory-mib sets it)",
                               format_bytes(bytes))};
  }
  const std::uint64_t bytes = std::min(mib, std::uint64_t{UINT64_MAX} >> 20) << 20;
  return {bytes, fmt::format("{} (--max-memory-mib {})", format_bytes(bytes), mib)};
}

const CLI::Validator& at_least_one_mib() {
  static const CLI::Validator validator(
      [](std::string& value) -> std::string {
        char* end = nullptr;
        const unsigned long long mib = std::strtoull(value.c_str(), &end, 0);
        return end != value.c_str() && *end == '\0' && mib == 0 ? "must be at least 1, got " + value
                                                                : std::string();
      },
      "POSITIVE");
  return validator;
}

}  // namespace ranklab::cli
