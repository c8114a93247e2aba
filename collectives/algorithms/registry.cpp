// The registry of collective algorithms (registry.hpp): one row each, with the declarations
// of the functions the rows name beside them. Each function lives in its own file,
// <collective>_<algorithm>.cpp (collectives/CMakeLists.txt builds every file here).
#include "collectives/algorithms/registry.hpp"

#include <cstddef>

namespace ranklab {

void all_reduce_ring(PeerLink& link, const CollectiveArgs& args);
void all_gather_ring(PeerLink& link, const CollectiveArgs& args);
void reduce_scatter_ring(PeerLink& link, const CollectiveArgs& args);
void broadcast_tree(PeerLink& link, const CollectiveArgs& args);
void reduce_tree(PeerLink& link, const CollectiveArgs& args);
void gather_tree(PeerLink& link, const CollectiveArgs& args);
void scatter_tree(PeerLink& link, const CollectiveArgs& args);
void all_reduce_recursive_doubling(PeerLink& link, const CollectiveArgs& args);
void all_reduce_halving_doubling(PeerLink& link, const CollectiveArgs& args);
void barrier_dissemination(PeerLink& link, const CollectiveArgs& args);
void all_to_all_pairwise(PeerLink& link, const CollectiveArgs& args);

namespace {

constexpr AlgorithmRow kAlgorithms[] = {
    {Algorithm::automatic, "automatic", {}},
    {Algorithm::direct, "direct", {}},
    {Algorithm::ring,
     "ring",
     {{{OpKind::all_reduce, all_reduce_ring},
       {OpKind::all_gather, all_gather_ring},
       {OpKind::reduce_scatter, reduce_scatter_ring}}}},
    {Algorithm::tree,
     "tree",
     {{{OpKind::broadcast, broadcast_tree},
       {OpKind::reduce, reduce_tree},
       {OpKind::gather, gather_tree},
       {OpKind::scatter, scatter_tree}}}},
    {Algorithm::recursive_doubling,
     "recursive-doubling",
     {{{OpKind::all_reduce, all_reduce_recursive_doubling}}}},
    {Algorithm::halving_doubling,
     "halving-doubling",
     {{{OpKind::all_reduce, all_reduce_halving_doubling}}}},
    {Algorithm::dissemination, "dissemination", {{{OpKind::barrier, barrier_dissemination}}}},
    {Algorithm::pairwise, "pairwise", {{{OpKind::all_to_all, all_to_all_pairwise}}}},
};

// to_string(Algorithm) indexes the rows by enumerator.
constexpr bool in_enum_order() {
  for (std::size_t i = 0; i < std::size(kAlgorithms); ++i) {
    if (static_cast<std::size_t>(kAlgorithms[i].algorithm) != i) return false;
  }
  return true;
}
static_assert(in_enum_order(), "kAlgorithms lists the algorithms in the enum's order");

}  // namespace

std::span<const AlgorithmRow> algorithm_rows() { return kAlgorithms; }

}  // namespace ranklab
