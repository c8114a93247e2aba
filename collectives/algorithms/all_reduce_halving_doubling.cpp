// Halving-doubling all_reduce: Rabenseifner's algorithm (Thakur, Rabenseifner & Gropp,
// "Optimization of collective communication operations in MPICH", IJHPCA 19(1), 2005,
// sec. 4; MPICH's long-message allreduce; gloo's allreduce_halving_doubling).
//
// Vocabulary: after the fold (fold.hpp) pof2 ranks take part, numbered by `newrank`. The
// buffer of n elements is split into pof2 blocks with even_block; a *range* [lo, hi) of
// blocks is the part of the buffer a rank is responsible for at a given step.
//
// Schedule, for rank r:
//   fold in (p not a power of two): the first 2*rem ranks pair up, even into odd.
//   reduce-scatter by recursive halving, log2(pof2) steps with mask = 1, 2, 4, ...: split
//     the current range in two; the lower newrank of the pair newrank ^ mask keeps the lower
//     half, the upper one the upper half; each sends the half it gives up and reduces the
//     half it keeps, the lower newrank's operand first. Pairing at distance 1 first (as
//     MPICH does) makes the operand order the same balanced tree as recursive doubling, so
//     the two algorithms give bitwise-identical results. Each rank ends with one block.
//   finish (avg divides that block).
//   all-gather by recursive doubling, the same steps in reverse (mask = pof2/2, ..., 1):
//     exchange ranges with the partner, doubling the range held.
//   fold out: odd ranks of the fold send the result to their even neighbour.
// Messages per rank: 2 log2(pof2), of n/2, n/4, ... elements: about 2n sent in all
// (bandwidth-optimal, like ring, with log p steps instead of p-1).
#include <utility>
#include <vector>

#include "collectives/algorithms/algorithm.hpp"
#include "collectives/algorithms/chunks.hpp"
#include "collectives/algorithms/fold.hpp"

namespace ranklab {
namespace {

struct Range {
  int lo = 0;
  int hi = 0;
};

// Recursive halving; returns the ranges held before each step (the all-gather replays
// them backwards) and leaves `held` at the final single block.
std::vector<Range> reduce_scatter_halving(PeerLink& link, const PowerOfTwoFold& fold,
                                          std::byte* data, std::size_t n, std::byte* incoming,
                                          Range& held) {
  const int me = fold.newrank(), pof2 = fold.pof2();
  std::vector<Range> history;
  for (int mask = 1; mask < pof2; mask <<= 1) {
    const int partner = me ^ mask;
    const int mid = (held.lo + held.hi) / 2;
    const Range keep = me < partner ? Range{held.lo, mid} : Range{mid, held.hi};
    const Range give = me < partner ? Range{mid, held.hi} : Range{held.lo, mid};
    const Block kept = block_span(n, pof2, keep.lo, keep.hi);
    const Block given = block_span(n, pof2, give.lo, give.hi);
    const int peer = fold.rank_of(partner);
    link.exchange(data + link.bytes(given.offset), given.count, peer, incoming, kept.count, peer);
    std::byte* mine = data + link.bytes(kept.offset);
    if (partner < me) {
      link.reduce_after(mine, incoming, kept.count);
    } else {
      link.reduce(mine, incoming, kept.count);
    }
    history.push_back(held);
    held = keep;
  }
  return history;
}

// Recursive doubling of the ranges held, replaying `history` backwards.
void all_gather_doubling(PeerLink& link, const PowerOfTwoFold& fold, std::byte* data, std::size_t n,
                         std::vector<Range> history, Range held) {
  const int me = fold.newrank(), pof2 = fold.pof2();
  for (int mask = pof2 / 2; mask >= 1; mask /= 2) {
    const Range parent = history.back();
    history.pop_back();
    // The partner holds the other half of the range both held before this step's halving.
    const Range theirs =
        held.lo == parent.lo ? Range{held.hi, parent.hi} : Range{parent.lo, held.lo};
    const Block mine = block_span(n, pof2, held.lo, held.hi);
    const Block other = block_span(n, pof2, theirs.lo, theirs.hi);
    const int peer = fold.rank_of(me ^ mask);
    link.exchange(data + link.bytes(mine.offset), mine.count, peer, data + link.bytes(other.offset),
                  other.count, peer);
    held = parent;
  }
}

}  // namespace

void all_reduce_halving_doubling(PeerLink& link, const CollectiveArgs& args) {
  const std::size_t n = args.output.count;
  copy_to_output(args, n);
  auto* data = static_cast<std::byte*>(args.output.data);
  const ScratchPool::Lease incoming = link.scratch(n);
  const PowerOfTwoFold fold(link.rank(), link.size());
  fold.fold_in(link, data, n, incoming.data());
  if (fold.newrank() >= 0) {
    Range held{0, fold.pof2()};
    std::vector<Range> history = reduce_scatter_halving(link, fold, data, n, incoming.data(), held);
    const Block own = even_block(n, fold.pof2(), held.lo);
    link.finish(data + link.bytes(own.offset), own.count);
    all_gather_doubling(link, fold, data, n, std::move(history), held);
  }
  fold.fold_out(link, data, n);
}

}  // namespace ranklab
