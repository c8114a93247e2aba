// Our XXH64 (traces/hash.cpp) against libxxhash's, the reference the trace format names:
// every length a tail can take, lengths around the stripe and page sizes, unaligned starts,
// several seeds, and batches of 1..9 payloads of equal and mixed lengths on both code paths.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "traces/error.hpp"
#include "traces/hash.hpp"

namespace ranklab {
namespace {

constexpr std::uint64_t kSeeds[] = {0, 1, 0x9E3779B185EBCA87ULL, ~std::uint64_t{0}};

std::vector<std::byte> random_bytes(std::size_t n, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<std::byte> out(n);
  for (auto& b : out) b = static_cast<std::byte>(gen());
  return out;
}

std::uint64_t reference(std::span<const std::byte> bytes, std::uint64_t seed) {
  return XXH64(bytes.data(), bytes.size(), seed);
}

/// Both code paths of payload_hashes (the vector one only where the CPU has it).
std::vector<bool> paths() {
  if (detail::vector_hashes_available()) return {false, true};
  return {false};
}

TEST(PayloadHash, EveryShortLengthMatchesLibxxhash) {
  const auto bytes = random_bytes(300 + 8, 1);
  for (const std::uint64_t seed : kSeeds) {
    for (std::size_t len = 0; len <= 300; ++len) {
      // Starts 0..7 bytes into the buffer: reads must not assume alignment.
      for (std::size_t offset = 0; offset < 8; ++offset) {
        const std::span<const std::byte> in(bytes.data() + offset, len);
        ASSERT_EQ(payload_hash(in, seed), reference(in, seed))
            << "length " << len << " offset " << offset << " seed " << seed;
      }
    }
  }
}

TEST(PayloadHash, LongLengthsMatchLibxxhash) {
  const auto bytes = random_bytes((1 << 20) + 64, 2);
  for (const std::size_t len : {511ul, 512ul, 1000ul, 4095ul, 4096ul, 4097ul, 16384ul, 16415ul,
                                65536ul + 31, (1ul << 20) + 13}) {
    for (const std::size_t offset : {0ul, 3ul}) {
      const std::span<const std::byte> in(bytes.data() + offset, len);
      EXPECT_EQ(payload_hash(in), reference(in, 0)) << "length " << len << " offset " << offset;
      EXPECT_EQ(payload_hash(in, kSeeds[3]), reference(in, kSeeds[3])) << "length " << len;
    }
  }
}

TEST(PayloadHash, KnownValues) {
  // From xxHash's own sanity checks: the empty input, seed 0 and seed PRIME32_1.
  EXPECT_EQ(payload_hash({}), 0xEF46DB3751D8E999ULL);
  EXPECT_EQ(payload_hash({}, 0x9E3779B1U), 0xAC75FDA2929B17EFULL);
  EXPECT_EQ(format_hash(payload_hash({})), "ef46db3751d8e999");
}

/// Checks payload_hashes over `payloads` against libxxhash on every path.
void expect_batch_matches(const std::vector<std::span<const std::byte>>& payloads,
                          std::uint64_t seed) {
  for (const bool vector : paths()) {
    std::vector<std::uint64_t> hashes(payloads.size(), 0xdeadbeef);
    detail::payload_hashes_on(vector, payloads, hashes, seed);
    for (std::size_t i = 0; i < payloads.size(); ++i) {
      ASSERT_EQ(hashes[i], reference(payloads[i], seed))
          << "payload " << i << " of " << payloads.size() << ", length " << payloads[i].size()
          << ", vector " << vector << ", seed " << seed;
    }
  }
}

TEST(PayloadHashes, EqualLengthsInBatchesOfOneToNine) {
  const auto bytes = random_bytes(9 * 4200, 3);
  for (const std::uint64_t seed : kSeeds) {
    for (const std::size_t len : {0ul, 31ul, 32ul, 33ul, 128ul, 300ul, 992ul, 1024ul, 1056ul, 4096ul, 4103ul}) {
      for (std::size_t n = 1; n <= 9; ++n) {
        std::vector<std::span<const std::byte>> payloads;
        // Distinct, unaligned payloads.
        for (std::size_t i = 0; i < n; ++i) payloads.emplace_back(bytes.data() + i * 4200 + i, len);
        expect_batch_matches(payloads, seed);
      }
    }
  }
}

TEST(PayloadHashes, MixedLengthsAndRepeatedBuffers) {
  const auto bytes = random_bytes(70000, 4);
  std::mt19937 gen(5);
  for (int round = 0; round < 200; ++round) {
    std::vector<std::span<const std::byte>> payloads;
    const std::size_t n = 1 + gen() % 12;
    for (std::size_t i = 0; i < n; ++i) {
      // Short and long mixed, so batches have a common prefix and payloads longer than it;
      // now and then the same span twice (a buffer two members pass).
      const std::size_t len = gen() % 3 == 0 ? gen() % 40 : gen() % 5000;
      const std::size_t offset = gen() % (bytes.size() - len);
      if (!payloads.empty() && gen() % 8 == 0) {
        payloads.push_back(payloads.back());
      } else {
        payloads.emplace_back(bytes.data() + offset, len);
      }
    }
    expect_batch_matches(payloads, kSeeds[round % 4]);
  }
  expect_batch_matches({}, 0);
}

TEST(PayloadHashes, RefusesTooFewHashes) {
  const auto bytes = random_bytes(64, 6);
  const std::vector<std::span<const std::byte>> payloads(3, std::span<const std::byte>(bytes));
  std::vector<std::uint64_t> hashes(2);
  EXPECT_THROW(payload_hashes(payloads, hashes), UsageError);
}

}  // namespace
}  // namespace ranklab
