// The collective algorithms written as point-to-point message patterns. Each lives in its
// own file, <collective>_<algorithm>.cpp, with its schedule and reference on top, and has
// its row in registry.cpp (name, collectives, function); they share PeerLink (the peer
// interface), chunks.hpp (block and tree arithmetic) and ring.hpp.
//
// Floating-point results. Every algorithm combines each element's p operands in an order
// fixed by the schedule alone, never by message arrival, so results are bitwise
// reproducible run to run, under any scheduling policy and thread count, and identical on
// every rank. The orders differ between algorithms:
//   direct              x0 OP x1 OP ... OP x(p-1), left to right (the fabric)
//   ring                x(j+1) OP x(j+2) OP ... OP x(j) for block j, left to right
//   tree (reduce)       a binomial tree over ranks relative to the root, lower ranks left
//   recursive-doubling  a balanced pairwise tree over ranks in order, the extra ranks of a
//   halving-doubling      non-power-of-two size folded into their neighbours first; the two
//                         give bitwise-identical results
// For sum, any order's rounding error is at most gamma(p-1) * sum|x_i| with gamma(k) = k*u /
// (1 - k*u) and u = eps/2 (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd
// ed., sec. 4.2), so two algorithms differ by at most about (p-1) * eps * sum|x_i| per
// element. For prod the same argument bounds the relative difference by (p-1) * eps; avg
// adds one rounding of the division; min and max are exact. Integers are exact.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "collectives/algorithms/peer_link.hpp"
#include "collectives/backend.hpp"
#include "collectives/options.hpp"
#include "comm/collective_args.hpp"

namespace ranklab {

/// Whether `algorithm` implements `op` (direct implements every collective).
bool implements(Algorithm algorithm, OpKind op);

/// The concrete algorithm a call runs. `requested` (a call's option) wins unless it is
/// `automatic`; then the communicator's `fallback` applies, or `direct` where `fallback`
/// does not implement `op` (so `--algo ring` still runs broadcasts). Groups of one rank
/// always run `direct`. Throws UsageError if a requested algorithm does not implement `op`.
Algorithm resolve_algorithm(OpKind op, Algorithm requested, Algorithm fallback, int group_size);

/// Runs `args` over `backend` with `algorithm` (neither `direct` nor `automatic`) as sends
/// and receives tagged `tag`, and returns when this rank's part is done (there is no
/// progress engine to run a script in the background). Zero-element calls send nothing.
void run_p2p_algorithm(Backend& backend, Algorithm algorithm, const CollectiveArgs& args, int tag);

// The algorithms themselves are declared and listed in registry.cpp.

/// all_to_all_v's counts, one per peer, in group rank order.
struct PerPeerCounts {
  std::span<const std::size_t> send;
  std::span<const std::size_t> recv;
};

/// Checks all_to_all_v's arguments (UsageError) and returns its fingerprint.
CollectiveFingerprint all_to_all_v_fingerprint(const CollectiveArgs& args,
                                               const PerPeerCounts& counts, int group_size);

/// Runs all_to_all_v (pairwise, the only algorithm there is for it) with messages tagged `tag`.
void run_all_to_all_v(Backend& backend, const CollectiveArgs& args, const PerPeerCounts& counts,
                      int tag);

/// all_to_all with per-peer counts: `send_counts[j]` elements of `input` (packed in rank
/// order) go to rank j, `recv_counts[j]` arrive from rank j into `output` (packed likewise).
void all_to_all_v_pairwise(PeerLink& link, ConstBuffer input,
                           std::span<const std::size_t> send_counts, MutableBuffer output,
                           std::span<const std::size_t> recv_counts);

/// all_reduce, broadcast and reduce work in place on `output`: copies `input` there first
/// if the caller passed two buffers.
void copy_to_output(const CollectiveArgs& args, std::size_t count);

/// Whether two byte ranges overlap (in-place calls need a copy of their input).
bool overlaps(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes);

}  // namespace ranklab
