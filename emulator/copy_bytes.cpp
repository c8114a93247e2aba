#include "emulator/detail/copy_bytes.hpp"

#include <algorithm>
#include <cstring>

#include <tbb/parallel_for.h>

namespace ranklab::detail {
namespace {

// Below this a single memcpy is done before the threads would have started.
constexpr std::size_t kParallelBytes = 2 * 1024 * 1024;
constexpr std::size_t kChunkBytes = 512 * 1024;

bool overlap(const std::byte* a, const std::byte* b, std::size_t bytes) {
  return a < b + bytes && b < a + bytes;
}

}  // namespace

void copy_bytes(std::byte* dst, const std::byte* src, std::size_t bytes) {
  if (bytes == 0 || dst == src) return;
  if (bytes < kParallelBytes || overlap(dst, src, bytes)) {
    std::memmove(dst, src, bytes);
    return;
  }
  const std::size_t chunks = (bytes + kChunkBytes - 1) / kChunkBytes;
  tbb::parallel_for(std::size_t{0}, chunks, [&](std::size_t c) {
    const std::size_t begin = c * kChunkBytes;
    std::memcpy(dst + begin, src + begin, std::min(kChunkBytes, bytes - begin));
  });
}

}  // namespace ranklab::detail
