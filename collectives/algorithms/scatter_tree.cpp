// Binomial-tree scatter (Thakur, Rabenseifner & Gropp, "Optimization of collective
// communication operations in MPICH", IJHPCA 19(1), 2005, sec. 3; MPICH's scatter).
//
// Vocabulary: `vr` is a rank relative to the root; the tree is the binomial tree of
// chunks.hpp. Rank j's *block* is block j of the root's input (c elements each); a
// subtree's blocks are contiguous in relative order, so vr handles blocks
// [vr, vr + subtree_size) in a buffer laid out relative to itself (its own block first).
//
// Schedule, for relative rank vr: the root lays its input out in relative order (input
// block (j + root) mod p becomes relative block j; with root 0 that is the input itself).
// Other ranks receive their subtree's blocks from the parent. Then each sends child vr + m
// its subtree, largest first, and keeps block 0.
// Messages: p-1 in all, one per non-root rank, of c * subtree_size(vr) elements.
#include <cstring>

#include "collectives/algorithms/algorithm.hpp"
#include "collectives/algorithms/chunks.hpp"

namespace ranklab {

void scatter_tree(PeerLink& link, const CollectiveArgs& args) {
  const int p = link.size(), root = args.root;
  const int vr = wrap(link.rank() - root, p);
  const std::size_t c = args.output.count;
  auto* out = static_cast<std::byte*>(args.output.data);
  const int span = subtree_span(vr, p);
  const auto held = static_cast<std::size_t>(subtree_size(vr, p));
  const int parent = wrap(vr - span + root, p);
  if (held == 1 && vr != 0) {
    link.recv(out, c, parent);
    return;
  }
  ScratchPool::Lease scratch;
  const std::byte* blocks = static_cast<const std::byte*>(args.input.data);
  if (vr != 0 || root != 0) {
    scratch = link.scratch(held * c);
    if (vr != 0) {
      link.recv(scratch.data(), held * c, parent);
    } else {
      for (int j = 0; j < p; ++j) {
        std::memcpy(scratch.data() + link.bytes(static_cast<std::size_t>(j) * c),
                    blocks + link.bytes(static_cast<std::size_t>(wrap(j + root, p)) * c),
                    link.bytes(c));
      }
    }
    blocks = scratch.data();
  }
  for (int m = span / 2; m >= 1; m /= 2) {
    if (vr + m >= p) continue;
    const auto count = static_cast<std::size_t>(subtree_size(vr + m, p)) * c;
    link.send(blocks + link.bytes(static_cast<std::size_t>(m) * c), count, wrap(vr + m + root, p));
  }
  // Last, so an output that aliases the root's own input block is not overwritten early.
  std::memmove(out, blocks, link.bytes(c));
}

}  // namespace ranklab
