// Payload hashes recorded in traces: xxHash64 with seed 0, printed as 16 hex digits.
//
// The trace format fixes XXH64 (FORMAT.md), so these give exactly libxxhash's XXH64 values
// (tests/traces/hash_test.cpp checks them against it). They are our own so that several
// payloads can be hashed at once: one XXH64 is latency-bound (4 lanes, each a chain of
// multiply-rotate-multiply per 8 bytes), and the lanes of different payloads are independent
// chains the CPU can overlap. A collective's contributions are hashed together when its last
// member arrives (emulator/detail/payload_hashes.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace ranklab {

/// xxHash64 of a payload (seed 0 in traces).
std::uint64_t payload_hash(std::span<const std::byte> bytes, std::uint64_t seed = 0);

/// How many payloads payload_hashes interleaves: 4 payloads x 4 lanes of XXH64.
inline constexpr std::size_t kHashBatch = 4;

/// hashes[i] = payload_hash(payloads[i], seed) for every i, several payloads interleaved.
/// `hashes` has payloads.size() elements (UsageError otherwise).
void payload_hashes(std::span<const std::span<const std::byte>> payloads,
                    std::span<std::uint64_t> hashes, std::uint64_t seed = 0);

namespace detail {
/// Whether this CPU runs payload_hashes on its vector units (x86-64 with AVX-512DQ/VL).
bool vector_hashes_available();
/// payload_hashes on the vector path if `vector` and available, else the portable one
/// (for tests: both give XXH64's values).
void payload_hashes_on(bool vector, std::span<const std::span<const std::byte>> payloads,
                       std::span<std::uint64_t> hashes, std::uint64_t seed);
}  // namespace detail

/// The hash as the trace writes it: 16 lower-case hex digits.
std::string format_hash(std::uint64_t hash);

}  // namespace ranklab
