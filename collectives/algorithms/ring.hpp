// The two phases every ring algorithm is made of (Patarasuk & Yuan 2009): a reduce-scatter
// and an all-gather around the ring 0 -> 1 -> ... -> p-1 -> 0. A buffer of `total`
// elements is split into size() blocks with even_block; block j ends up owned by rank j.
#pragma once

#include <cstddef>

#include "collectives/algorithms/peer_link.hpp"

namespace ranklab {

/// p-1 steps; at step s rank r sends its partial sum of block r-s-1 to r+1 and folds its own
/// input into block r-s-2, received from r-1. On return `result` holds block `rank` of
/// `input` reduced over every rank, in ring order starting after the owner:
/// x[j+1] OP x[j+2] OP ... OP x[j] for block j. Not finished (avg still sums). `result`
/// may alias block `rank` of `input`: that block is read last.
void ring_reduce_scatter(PeerLink& link, const std::byte* input, std::size_t total,
                         std::byte* result);

/// p-1 steps; at step s rank r sends block r-s to r+1 and receives block r-s-1 from r-1.
/// On entry `data` holds this rank's block; on return it holds every block.
void ring_all_gather(PeerLink& link, std::byte* data, std::size_t total);

}  // namespace ranklab
