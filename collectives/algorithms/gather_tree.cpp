// Binomial-tree gather (Thakur, Rabenseifner & Gropp, "Optimization of collective
// communication operations in MPICH", IJHPCA 19(1), 2005, sec. 3; MPICH's gather).
//
// Vocabulary: `vr` is a rank relative to the root; the tree is the binomial tree of
// chunks.hpp. Each rank contributes one *block* of c elements; a subtree's blocks are
// contiguous in relative order, so vr collects blocks [vr, vr + subtree_size) in a buffer
// laid out relative to itself (its own block first).
//
// Schedule, for relative rank vr: leaves send their input to the parent. Inner ranks copy
// their input to block 0, receive each child vr + m (smallest first) into block m, then send
// the whole subtree to the parent. The root finally rotates relative block j into output
// block (j + root) mod p.
// Messages: p-1 in all, one per non-root rank, of c * subtree_size(vr) elements: the root
// receives (p-1) * c elements, and each element travels once per tree level below it.
#include <cstring>

#include "collectives/algorithms/algorithm.hpp"
#include "collectives/algorithms/chunks.hpp"

namespace ranklab {

void gather_tree(PeerLink& link, const CollectiveArgs& args) {
  const int p = link.size(), root = args.root;
  const int vr = wrap(link.rank() - root, p);
  const std::size_t c = args.input.count;
  const int parent = wrap(vr - subtree_span(vr, p) + root, p);
  const auto held = static_cast<std::size_t>(subtree_size(vr, p));
  if (held == 1 && vr != 0) {
    link.send(static_cast<const std::byte*>(args.input.data), c, parent);
    return;
  }
  const ScratchPool::Lease blocks = link.scratch(held * c);
  std::memcpy(blocks.data(), args.input.data, link.bytes(c));
  for (int m = 1; vr + m < p && m < subtree_span(vr, p); m *= 2) {
    const auto count = static_cast<std::size_t>(subtree_size(vr + m, p)) * c;
    link.recv(blocks.data() + link.bytes(static_cast<std::size_t>(m) * c), count,
              wrap(vr + m + root, p));
  }
  if (vr != 0) {
    link.send(blocks.data(), held * c, parent);
    return;
  }
  auto* out = static_cast<std::byte*>(args.output.data);
  for (int j = 0; j < p; ++j) {
    std::memcpy(out + link.bytes(static_cast<std::size_t>(wrap(j + root, p)) * c),
                blocks.data() + link.bytes(static_cast<std::size_t>(j) * c), link.bytes(c));
  }
}

}  // namespace ranklab
