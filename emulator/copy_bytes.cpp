#include "emulator/detail/copy_bytes.hpp"

#include <cstring>

#include "comm/parallel_ranges.hpp"

namespace ranklab::detail {
namespace {

bool overlap(const std::byte* a, const std::byte* b, std::size_t bytes) {
  return a < b + bytes && b < a + bytes;
}

}  // namespace

void copy_bytes(std::byte* dst, const std::byte* src, std::size_t bytes) {
  if (bytes == 0 || dst == src) return;
  if (overlap(dst, src, bytes)) {
    std::memmove(dst, src, bytes);
    return;
  }
  for_ranges(bytes, 1, [&](std::size_t first, std::size_t n) {
    std::memcpy(dst + first, src + first, n);
  });
}

}  // namespace ranklab::detail
