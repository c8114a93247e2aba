// Splitting a large buffer's work over the CPUs with oneTBB, shared by the fabric's payload
// copies and the collective algorithms' reductions.
#pragma once

#include <algorithm>
#include <cstddef>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

namespace ranklab {

/// Below this many bytes the work runs on the calling thread: handing 1 MiB to other threads
/// costs about as much as copying or reducing it.
inline constexpr std::size_t kParallelBytes = 1024 * 1024;
/// The smallest piece one thread takes.
inline constexpr std::size_t kParallelGrainBytes = 64 * 1024;

/// Calls body(first, count) over [0, count) elements of `elem` bytes each: once, on the
/// calling thread, for small buffers; in disjoint pieces on oneTBB's threads for large ones.
template <typename Body>
void for_ranges(std::size_t count, std::size_t elem, Body body) {
  if (count * elem < kParallelBytes) {
    body(std::size_t{0}, count);
    return;
  }
  const std::size_t grain = std::max<std::size_t>(1, kParallelGrainBytes / elem);
  tbb::parallel_for(
      tbb::blocked_range<std::size_t>(0, count, grain),
      [&](const tbb::blocked_range<std::size_t>& r) { body(r.begin(), r.end() - r.begin()); });
}

}  // namespace ranklab
