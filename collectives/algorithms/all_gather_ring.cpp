// Ring all_gather (Patarasuk & Yuan 2009, the second phase of ring all_reduce; MPICH's ring
// all_gather for long messages, Thakur, Rabenseifner & Gropp, IJHPCA 19(1), 2005).
//
// Vocabulary: the output holds p blocks of c elements (c = the input's count); block j is
// rank j's input.
//
// Schedule, for rank r: copy the input into block r; then p-1 steps, step s sends block r-s
// to r+1 and receives block r-s-1 from r-1.
// Messages per rank: p-1, of c elements each.
#include <cstring>

#include "collectives/algorithms/algorithm.hpp"
#include "collectives/algorithms/ring.hpp"

namespace ranklab {

void all_gather_ring(PeerLink& link, const CollectiveArgs& args) {
  const std::size_t c = args.input.count;
  auto* out = static_cast<std::byte*>(args.output.data);
  // An in-place input already sits in block r; memmove handles that and any distinct buffer.
  std::memmove(out + link.bytes(c * static_cast<std::size_t>(link.rank())), args.input.data,
               link.bytes(c));
  ring_all_gather(link, out, c * static_cast<std::size_t>(link.size()));
}

}  // namespace ranklab
