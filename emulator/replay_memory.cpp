// How much memory a replay may take by default (replay.hpp): half of what this process can
// have, which is the machine's memory or, in a container, its control group's limit.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <optional>
#include <string>

#include "emulator/replay.hpp"
#include "traces/text.hpp"

namespace ranklab {
namespace {

std::uint64_t physical_memory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size);
}

/// The number a cgroup file holds; nullopt for "max", a missing file or anything else.
std::optional<std::uint64_t> cgroup_limit(const char* path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text)) return std::nullopt;
  const std::optional<std::uint64_t> value = parse_whole<std::uint64_t>(text);
  if (!value || *value == 0) return std::nullopt;
  return value;
}

}  // namespace

std::uint64_t default_replay_memory_limit() {
  std::uint64_t memory = physical_memory();
  // cgroup v2, then v1 (whose "no limit" is a huge number, which min() ignores).
  for (const char* path :
       {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    if (const auto limit = cgroup_limit(path)) {
      memory = memory == 0 ? *limit : std::min(memory, *limit);
    }
  }
  // Unknown (no sysconf, no cgroup): a fixed 4 GiB.
  return memory == 0 ? std::uint64_t{4} << 30 : memory / 2;
}

}  // namespace ranklab
