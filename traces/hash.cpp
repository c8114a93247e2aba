#include "traces/hash.hpp"

#include <fmt/format.h>
#include <xxhash.h>

namespace ranklab {

std::uint64_t payload_hash(std::span<const std::byte> bytes) {
  return XXH64(bytes.data(), bytes.size(), /*seed=*/0);
}

std::string format_hash(std::uint64_t hash) { return fmt::format("{:016x}", hash); }

}  // namespace ranklab
