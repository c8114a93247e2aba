// Payload hashes recorded in traces: xxHash64 with seed 0, printed as 16 hex digits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace ranklab {

/// xxHash64 (seed 0) of a payload.
std::uint64_t payload_hash(std::span<const std::byte> bytes);

/// The hash as the trace writes it: 16 lower-case hex digits.
std::string format_hash(std::uint64_t hash);

}  // namespace ranklab
