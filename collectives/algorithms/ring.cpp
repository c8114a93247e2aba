// The phases of ring algorithms; see ring.hpp for the schedule.
#include "collectives/algorithms/ring.hpp"

#include <cstring>
#include <utility>

#include "collectives/algorithms/chunks.hpp"

namespace ranklab {

void ring_reduce_scatter(PeerLink& link, const std::byte* input, std::size_t total,
                         std::byte* result) {
  const int p = link.size(), r = link.rank();
  const int right = wrap(r + 1, p), left = wrap(r - 1, p);
  auto block = [&](int j) { return even_block(total, p, wrap(j, p)); };
  // Two block-sized buffers: the partial being sent, and the one arriving.
  ScratchPool::Lease sending = link.scratch(block(0).count);
  ScratchPool::Lease arriving = link.scratch(block(0).count);
  // Step 0 sends this rank's own input for block r-1: it starts that block's reduction.
  const std::byte* out = input + link.bytes(block(r - 1).offset);
  std::size_t out_count = block(r - 1).count;
  for (int s = 0; s < p - 1; ++s) {
    const Block in = block(r - s - 2);
    link.exchange(out, out_count, right, arriving.data(), in.count, left);
    // The partial from the left covers the ranks before this one: it goes first.
    link.reduce(arriving.data(), input + link.bytes(in.offset), in.count);
    std::swap(sending, arriving);
    out = sending.data();
    out_count = in.count;
  }
  // After p-1 steps the last block folded in is r - p = r: this rank's own.
  if (p == 1) out = input + link.bytes(block(r).offset);
  std::memmove(result, out, link.bytes(block(r).count));
}

void ring_all_gather(PeerLink& link, std::byte* data, std::size_t total) {
  const int p = link.size(), r = link.rank();
  const int right = wrap(r + 1, p), left = wrap(r - 1, p);
  for (int s = 0; s < p - 1; ++s) {
    // Forward what arrived in the previous step (step 0: this rank's own block).
    const Block out = even_block(total, p, wrap(r - s, p));
    const Block in = even_block(total, p, wrap(r - s - 1, p));
    link.exchange(data + link.bytes(out.offset), out.count, right, data + link.bytes(in.offset),
                  in.count, left);
  }
}

}  // namespace ranklab
