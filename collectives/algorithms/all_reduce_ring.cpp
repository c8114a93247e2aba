// Ring all_reduce (Patarasuk & Yuan, "Bandwidth optimal all-reduce algorithms for clusters
// of workstations", JPDC 69(2), 2009; the schedule of NCCL's and gloo's ring).
//
// Vocabulary: the buffer of n elements is split into p blocks with even_block (block j has
// n/p elements, one more for j < n % p); block j is *owned* by rank j after the first phase.
// Ranks form the ring r -> r+1.
//
// Schedule, for rank r:
//   phase 1, reduce-scatter (p-1 steps): step s sends the partial of block r-s-1 to r+1 and
//     receives the partial of block r-s-2 from r-1, folding in r's own elements. After it,
//     rank r holds block r reduced over all ranks (ring.hpp gives the operand order).
//   finish: avg divides the owned block by p, once, so every rank gets the same bits.
//   phase 2, all-gather (p-1 steps): step s forwards block r-s to r+1 and receives block
//     r-s-1 from r-1.
// Messages per rank: 2(p-1), of about n/p elements each; exactly 2n - |block r| - |block r+1|
// elements sent in all. Bandwidth-optimal: each rank sends and receives 2(p-1)/p * n.
#include "collectives/algorithms/algorithm.hpp"
#include "collectives/algorithms/chunks.hpp"
#include "collectives/algorithms/ring.hpp"

namespace ranklab {

void all_reduce_ring(PeerLink& link, const CollectiveArgs& args) {
  const std::size_t n = args.output.count;
  copy_to_output(args, n);
  auto* data = static_cast<std::byte*>(args.output.data);
  const Block own = even_block(n, link.size(), link.rank());
  std::byte* owned = data + link.bytes(own.offset);
  // Phase 1: the owned block is read last, so the result may land on it directly.
  ring_reduce_scatter(link, data, n, owned);
  link.finish(owned, own.count);
  // Phase 2: circulate the finished blocks.
  ring_all_gather(link, data, n);
}

}  // namespace ranklab
