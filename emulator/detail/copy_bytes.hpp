// Copies of message and collective payloads. Private to emulator/.
#pragma once

#include <cstddef>

namespace ranklab::detail {

/// memmove of `bytes` from `src` to `dst`; a large copy of disjoint ranges is split over the
/// CPUs with oneTBB (for_ranges, comm/parallel_ranges.hpp). One core's memcpy reaches
/// about half of this project's machine's memory bandwidth (a 512 MiB copy: 45.7 ms on one
/// thread, 26.4 ms on two; bench/RESULTS.md), and the fabric copies payloads while a worker
/// waits for them: a 64 MiB ring all_reduce is mostly copies of 8 MiB blocks.
void copy_bytes(std::byte* dst, const std::byte* src, std::size_t bytes);

}  // namespace ranklab::detail
