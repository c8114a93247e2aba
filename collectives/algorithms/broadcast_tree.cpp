// Binomial-tree broadcast (Thakur, Rabenseifner & Gropp, "Optimization of collective
// communication operations in MPICH", IJHPCA 19(1), 2005, sec. 3; MPICH's short-message
// bcast).
//
// Vocabulary: `vr` is a rank relative to the root ((r - root) mod p); the tree is the
// binomial tree of chunks.hpp: vr receives from vr minus its lowest set bit and sends to
// vr + m for every power of two m below that bit. Every message is the whole buffer of n
// elements.
//
// Schedule, for relative rank vr: receive from the parent (the root does not), then send to
// the children, largest subtree first so the deepest branch starts earliest.
// Messages: p-1 in all, each of n elements; the root sends ceil(log2 p); depth ceil(log2 p).
#include "collectives/algorithms/algorithm.hpp"
#include "collectives/algorithms/chunks.hpp"

namespace ranklab {

void broadcast_tree(PeerLink& link, const CollectiveArgs& args) {
  const int p = link.size(), root = args.root;
  const int vr = wrap(link.rank() - root, p);
  const std::size_t n = args.output.count;
  if (vr == 0) copy_to_output(args, n);
  auto* data = static_cast<std::byte*>(args.output.data);
  const int span = subtree_span(vr, p);
  if (vr != 0) link.recv(data, n, wrap(vr - span + root, p));
  for (int m = span / 2; m >= 1; m /= 2) {
    if (vr + m < p) link.send(data, n, wrap(vr + m + root, p));
  }
}

}  // namespace ranklab
