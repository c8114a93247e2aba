// Ring reduce_scatter (Patarasuk & Yuan 2009, the first phase of ring all_reduce; MPICH's
// pairwise/ring reduce_scatter, Thakur, Rabenseifner & Gropp 2005).
//
// Vocabulary: the input holds p blocks of c elements (c = the output's count); rank j's
// output is block j reduced over every rank.
//
// Schedule, for rank r: p-1 steps; step s sends the partial of block r-s-1 to r+1 and
// receives the partial of block r-s-2 from r-1, folding in its own input's block. The last
// block to arrive is block r, which is finished (avg) and written to the output.
// Messages per rank: p-1, of c elements each.
#include "collectives/algorithms/algorithm.hpp"
#include "collectives/algorithms/ring.hpp"

namespace ranklab {

void reduce_scatter_ring(PeerLink& link, const CollectiveArgs& args) {
  const std::size_t c = args.output.count;
  auto* out = static_cast<std::byte*>(args.output.data);
  ring_reduce_scatter(link, static_cast<const std::byte*>(args.input.data),
                      c * static_cast<std::size_t>(link.size()), out);
  link.finish(out, c);
}

}  // namespace ranklab
