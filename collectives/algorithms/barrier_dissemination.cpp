// Dissemination barrier (Hensgen, Finkel & Manber, "Two algorithms for barrier
// synchronization", IJPP 17(1), 1988; the barrier of MPICH and gloo).
//
// Vocabulary: a *round* k pairs each rank with the ranks at distance 2^k around the ring.
//
// Schedule, for rank r: ceil(log2 p) rounds; round k sends an empty message to
// (r + 2^k) mod p and receives one from (r - 2^k) mod p. After round k a rank has heard,
// directly or through others, from the 2^(k+1) - 1 ranks before it, so after the last round
// from every rank: none can leave before all have arrived.
// Messages per rank: ceil(log2 p), of zero bytes. Works for any p, unlike a butterfly.
#include "collectives/algorithms/algorithm.hpp"
#include "collectives/algorithms/chunks.hpp"

namespace ranklab {

void barrier_dissemination(PeerLink& link, const CollectiveArgs& /*args*/) {
  const int p = link.size(), r = link.rank();
  for (int distance = 1; distance < p; distance *= 2) {
    link.exchange(nullptr, 0, wrap(r + distance, p), nullptr, 0, wrap(r - distance, p));
  }
}

}  // namespace ranklab
