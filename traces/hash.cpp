// XXH64 as xxHash's specification defines it (doc/xxhash_spec.md, "XXH64 algorithm"):
// 32-byte stripes into 4 accumulators, then the tail in 8-, 4- and 1-byte steps, then the
// avalanche. Inputs are read little-endian, whatever the machine.
#include "traces/hash.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

#include <fmt/format.h>

#include "traces/error.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define RANKLAB_HASH_AVX512 1
#endif

namespace ranklab {
namespace {

constexpr std::uint64_t kPrime1 = 0x9E3779B185EBCA87ULL;
constexpr std::uint64_t kPrime2 = 0xC2B2AE3D27D4EB4FULL;
constexpr std::uint64_t kPrime3 = 0x165667B19E3779F9ULL;
constexpr std::uint64_t kPrime4 = 0x85EBCA77C2B2AE63ULL;
constexpr std::uint64_t kPrime5 = 0x27D4EB2F165667C5ULL;
constexpr std::size_t kStripe = 32;
/// payload_hashes batches payloads of at least this many stripes (1 KiB).
constexpr std::size_t kMinBatchStripes = 32;

std::uint64_t read64(const std::byte* p) {
  std::uint64_t v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  return v;
}

std::uint32_t read32(const std::byte* p) {
  std::uint32_t v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap32(v);
  return v;
}

inline std::uint64_t round(std::uint64_t acc, std::uint64_t input) {
  acc += input * kPrime2;
  acc = std::rotl(acc, 31);
  return acc * kPrime1;
}

inline std::uint64_t merge_round(std::uint64_t acc, std::uint64_t value) {
  acc ^= round(0, value);
  return acc * kPrime1 + kPrime4;
}

/// The four accumulators of one payload's stripes.
struct Lanes {
  std::uint64_t v[4];

  Lanes() = default;
  explicit Lanes(std::uint64_t seed)
      : v{seed + kPrime1 + kPrime2, seed + kPrime2, seed, seed - kPrime1} {}

  inline void stripe(const std::byte* p) {
    v[0] = round(v[0], read64(p));
    v[1] = round(v[1], read64(p + 8));
    v[2] = round(v[2], read64(p + 16));
    v[3] = round(v[3], read64(p + 24));
  }

  std::uint64_t converge() const {
    std::uint64_t h = std::rotl(v[0], 1) + std::rotl(v[1], 7) + std::rotl(v[2], 12) +
                      std::rotl(v[3], 18);
    for (const std::uint64_t lane : v) h = merge_round(h, lane);
    return h;
  }
};

/// The hash from its stripes' accumulators (none: shorter than a stripe) and the tail.
std::uint64_t finish(const Lanes* lanes, std::span<const std::byte> whole, std::uint64_t seed) {
  std::uint64_t h = lanes != nullptr ? lanes->converge() : seed + kPrime5;
  h += whole.size();
  const std::byte* p = whole.data() + whole.size() / kStripe * kStripe;
  std::size_t rest = whole.size() % kStripe;
  for (; rest >= 8; rest -= 8, p += 8) {
    h ^= round(0, read64(p));
    h = std::rotl(h, 27) * kPrime1 + kPrime4;
  }
  if (rest >= 4) {
    h ^= std::uint64_t{read32(p)} * kPrime1;
    h = std::rotl(h, 23) * kPrime2 + kPrime3;
    rest -= 4;
    p += 4;
  }
  for (; rest > 0; --rest, ++p) {
    h ^= std::uint64_t{std::to_integer<std::uint8_t>(*p)} * kPrime5;
    h = std::rotl(h, 11) * kPrime1;
  }
  h ^= h >> 33;
  h *= kPrime2;
  h ^= h >> 29;
  h *= kPrime3;
  h ^= h >> 32;
  return h;
}

std::uint64_t hash_one(std::span<const std::byte> bytes, std::uint64_t seed) {
  const std::size_t stripes = bytes.size() / kStripe;
  if (stripes == 0) return finish(nullptr, bytes, seed);
  Lanes lanes(seed);
  for (std::size_t s = 0; s < stripes; ++s) lanes.stripe(bytes.data() + s * kStripe);
  return finish(&lanes, bytes, seed);
}

#ifdef RANKLAB_HASH_AVX512
/// hash_together's lockstep stripes with AVX-512: one payload's 4 lanes in a 256-bit
/// register. vpmullq's chain is no shorter than the scalar one, but N payloads' chains run
/// side by side on the vector units (AVX2 has no 64-bit multiply).
template <std::size_t N>
__attribute__((target("avx512f,avx512vl,avx512dq"))) void stripes_avx512(
    Lanes* lanes, const std::byte* const* p, std::size_t stripes) {
  const __m256i prime1 = _mm256_set1_epi64x(static_cast<long long>(kPrime1));
  const __m256i prime2 = _mm256_set1_epi64x(static_cast<long long>(kPrime2));
  __m256i acc[N];
  for (std::size_t k = 0; k < N; ++k) {
    acc[k] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lanes[k].v));
  }
  for (std::size_t s = 0; s < stripes; ++s) {
#pragma GCC unroll 4
    for (std::size_t k = 0; k < N; ++k) {
      const __m256i in = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p[k] + s * kStripe));
      const __m256i sum = _mm256_add_epi64(acc[k], _mm256_mullo_epi64(in, prime2));
      acc[k] = _mm256_mullo_epi64(_mm256_rol_epi64(sum, 31), prime1);
    }
  }
  for (std::size_t k = 0; k < N; ++k) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(lanes[k].v), acc[k]);
  }
}
#endif

/// N payloads of at least `common` stripes each, their first `common` stripes in lockstep:
/// 4N independent chains in flight instead of 4.
template <std::size_t N>
void hash_together(const std::span<const std::byte>* in, std::uint64_t* const* out,
                   std::size_t common, std::uint64_t seed, bool vector) {
  Lanes lanes[N];
  const std::byte* p[N];
  for (std::size_t k = 0; k < N; ++k) {
    lanes[k] = Lanes(seed);
    p[k] = in[k].data();
  }
#ifdef RANKLAB_HASH_AVX512
  if (vector) {
    stripes_avx512<N>(lanes, p, common);
  } else
#endif
  {
    (void)vector;
    for (std::size_t s = 0; s < common; ++s) {
      // Unrolled, so that the accumulators stay in registers.
#pragma GCC unroll 4
      for (std::size_t k = 0; k < N; ++k) lanes[k].stripe(p[k] + s * kStripe);
    }
  }
  for (std::size_t k = 0; k < N; ++k) {
    // A longer payload's own stripes, alone.
    const std::size_t stripes = in[k].size() / kStripe;
    for (std::size_t s = common; s < stripes; ++s) lanes[k].stripe(p[k] + s * kStripe);
    *out[k] = finish(&lanes[k], in[k], seed);
  }
}

}  // namespace

std::uint64_t payload_hash(std::span<const std::byte> bytes, std::uint64_t seed) {
  return hash_one(bytes, seed);
}

bool detail::vector_hashes_available() {
#ifdef RANKLAB_HASH_AVX512
  static const bool available = [] {
    __builtin_cpu_init();  // may run before the constructors that would do it
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512dq");
  }();
  return available;
#else
  return false;
#endif
}

void detail::payload_hashes_on(bool vector, std::span<const std::span<const std::byte>> payloads,
                               std::span<std::uint64_t> hashes, std::uint64_t seed) {
  if (hashes.size() != payloads.size()) {
    throw UsageError(fmt::format("payload_hashes: {} payloads but room for {} hashes",
                                 payloads.size(), hashes.size()));
  }
  vector = vector && vector_hashes_available();
  // A short payload is done before batching it would pay (128 B: 1.7x slower in a batch of
  // two, 16 KiB: 1.5x faster, 4 KiB: 1.45x); the others go in batches.
  std::span<const std::byte> batch[kHashBatch];
  std::uint64_t* where[kHashBatch];
  std::size_t n = 0;
  std::size_t common = 0;
  const auto flush = [&] {
    switch (n) {
      case 1: hash_together<1>(batch, where, common, seed, vector); break;
      case 2: hash_together<2>(batch, where, common, seed, vector); break;
      case 3: hash_together<3>(batch, where, common, seed, vector); break;
      case 4: hash_together<4>(batch, where, common, seed, vector); break;
      default: break;
    }
    n = 0;
  };
  static_assert(kHashBatch == 4, "flush names each batch size");
  for (std::size_t i = 0; i < payloads.size(); ++i) {
    const std::size_t stripes = payloads[i].size() / kStripe;
    if (stripes < kMinBatchStripes) {
      hashes[i] = hash_one(payloads[i], seed);
      continue;
    }
    common = n == 0 ? stripes : std::min(common, stripes);
    batch[n] = payloads[i];
    where[n] = &hashes[i];
    if (++n == kHashBatch) flush();
  }
  flush();
}

void payload_hashes(std::span<const std::span<const std::byte>> payloads,
                    std::span<std::uint64_t> hashes, std::uint64_t seed) {
  detail::payload_hashes_on(/*vector=*/true, payloads, hashes, seed);
}

std::string format_hash(std::uint64_t hash) { return fmt::format("{:016x}", hash); }

}  // namespace ranklab
