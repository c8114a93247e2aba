// Binomial-tree reduce (Thakur, Rabenseifner & Gropp, "Optimization of collective
// communication operations in MPICH", IJHPCA 19(1), 2005, sec. 4; MPICH's short-message
// reduce).
//
// Vocabulary: `vr` is a rank relative to the root; the tree is the binomial tree of
// chunks.hpp, subtree of vr = relative ranks [vr, vr + span). An *accumulator* holds the
// reduction over the part of vr's subtree received so far; every message is n elements.
//
// Schedule, for relative rank vr: receive from the children vr + 1, vr + 2, vr + 4, ...
// (smallest subtree first) and fold each in after the accumulator, so operands stay in
// relative-rank order (the accumulator covers lower relative ranks than the child); then
// send the accumulator to the parent. The root finishes (avg) into its output. Non-root
// buffers are left untouched, as MPI and the direct algorithm leave them.
// Messages: p-1 in all, one per non-root rank, each of n elements.
#include <cstring>

#include "collectives/algorithms/algorithm.hpp"
#include "collectives/algorithms/chunks.hpp"

namespace ranklab {

void reduce_tree(PeerLink& link, const CollectiveArgs& args) {
  const int p = link.size(), root = args.root;
  const int vr = wrap(link.rank() - root, p);
  const std::size_t n = args.output.count;
  const int span = subtree_span(vr, p);
  const bool leaf = vr % 2 == 1 || vr + 1 >= p;  // no children: send the input as it is
  if (leaf && vr != 0) {
    link.send(static_cast<const std::byte*>(args.input.data), n, wrap(vr - span + root, p));
    return;
  }
  // The root accumulates in its output; inner ranks in a scratch buffer.
  ScratchPool::Lease scratch;
  std::byte* acc = static_cast<std::byte*>(args.output.data);
  if (vr == 0) {
    copy_to_output(args, n);
  } else {
    scratch = link.scratch(n);
    acc = scratch.data();
    std::memcpy(acc, args.input.data, link.bytes(n));
  }
  const ScratchPool::Lease incoming = link.scratch(n);
  for (int m = 1; m < span && vr + m < p; m *= 2) {
    link.recv(incoming.data(), n, wrap(vr + m + root, p));
    link.reduce(acc, incoming.data(), n);
  }
  if (vr == 0) {
    link.finish(acc, n);
  } else {
    link.send(acc, n, wrap(vr - span + root, p));
  }
}

}  // namespace ranklab
