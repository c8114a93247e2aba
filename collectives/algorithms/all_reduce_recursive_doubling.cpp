// Recursive-doubling all_reduce (Thakur, Rabenseifner & Gropp, "Optimization of collective
// communication operations in MPICH", IJHPCA 19(1), 2005, sec. 4; MPICH's short-message
// allreduce).
//
// Vocabulary: `newrank` numbers the pof2 ranks that take part after the fold (fold.hpp);
// every message carries the whole buffer of n elements.
//
// Schedule, for rank r:
//   fold in (p not a power of two): the first 2*rem ranks pair up, even into odd.
//   log2(pof2) steps: at step k (mask = 2^k) exchange the whole buffer with
//     newrank ^ mask and reduce, the lower newrank's operand first. After step k every rank
//     holds the reduction over its 2^(k+1)-rank block, so the operand order is a balanced
//     pairwise tree over ranks in order: ((x0 OP x1) OP (x2 OP x3)) OP ...
//   finish (avg divides), then fold out: odd ranks send the result to their even neighbour.
// Messages per rank: log2(pof2) of n elements, plus one for the ranks of the fold.
// Latency-optimal (log p steps) at the price of n per step: for short messages.
#include "collectives/algorithms/algorithm.hpp"
#include "collectives/algorithms/fold.hpp"

namespace ranklab {

void all_reduce_recursive_doubling(PeerLink& link, const CollectiveArgs& args) {
  const std::size_t n = args.output.count;
  copy_to_output(args, n);
  auto* data = static_cast<std::byte*>(args.output.data);
  const ScratchPool::Lease incoming = link.scratch(n);
  const PowerOfTwoFold fold(link.rank(), link.size());
  fold.fold_in(link, data, n, incoming.data());
  if (const int me = fold.newrank(); me >= 0) {
    for (int mask = 1; mask < fold.pof2(); mask <<= 1) {
      const int partner = me ^ mask;
      const int peer = fold.rank_of(partner);
      link.exchange(data, n, peer, incoming.data(), n, peer);
      if (partner < me) {
        link.reduce_after(data, incoming.data(), n);
      } else {
        link.reduce(data, incoming.data(), n);
      }
    }
    link.finish(data, n);
  }
  fold.fold_out(link, data, n);
}

}  // namespace ranklab
