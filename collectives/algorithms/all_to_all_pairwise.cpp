// Pairwise-exchange all_to_all (Thakur, Rabenseifner & Gropp, "Optimization of collective
// communication operations in MPICH", IJHPCA 19(1), 2005, sec. 3; MPICH's long-message
// alltoall and alltoallv), with equal or per-peer counts.
//
// Vocabulary: the input holds one *block* per destination rank, the output one per source
// rank, each packed in rank order; block sizes come from send_counts / recv_counts (all c
// for the equal-split all_to_all, whose blocks are c = input count / p elements).
//
// Schedule, for rank r: copy block r locally; then p-1 steps, step s sends block r+s to
// rank r+s and receives block r-s from rank r-s (mod p). Each step is one exchange with
// distinct partners, so no rank ever waits on two others; the (r+s, r-s) form works for any
// p, where the XOR pairing needs a power of two.
// Messages per rank: p-1, of send_counts[r+s] elements each (c for all_to_all).
#include <cstring>
#include <numeric>
#include <vector>

#include "collectives/algorithms/algorithm.hpp"
#include "collectives/algorithms/chunks.hpp"
#include "comm/errors.hpp"

namespace ranklab {
namespace {

// Element offsets of packed blocks: offsets[j] = sum of counts[0..j).
std::vector<std::size_t> offsets_of(std::span<const std::size_t> counts) {
  std::vector<std::size_t> offsets(counts.size(), 0);
  std::exclusive_scan(counts.begin(), counts.end(), offsets.begin(), std::size_t{0});
  return offsets;
}

}  // namespace

void all_to_all_v_pairwise(PeerLink& link, ConstBuffer input,
                           std::span<const std::size_t> send_counts, MutableBuffer output,
                           std::span<const std::size_t> recv_counts) {
  const int p = link.size(), r = link.rank();
  const auto me = static_cast<std::size_t>(r);
  RANKLAB_CHECK(send_counts[me] == recv_counts[me],
                "all_to_all_v: rank {} sends {} elements to itself but expects {}", r,
                send_counts[me], recv_counts[me]);
  const std::vector<std::size_t> send_at = offsets_of(send_counts);
  const std::vector<std::size_t> recv_at = offsets_of(recv_counts);
  // In place (or overlapping), later steps would send blocks already overwritten: copy.
  std::vector<std::byte> copy;
  const auto* in = static_cast<const std::byte*>(input.data);
  if (overlaps(input.data, input.bytes(), output.data, output.bytes())) {
    copy.assign(in, in + input.bytes());
    in = copy.data();
  }
  auto* out = static_cast<std::byte*>(output.data);
  if (send_counts[me] != 0) {  // empty buffers may be null, which memmove must not see
    std::memmove(out + link.bytes(recv_at[me]), in + link.bytes(send_at[me]),
                 link.bytes(send_counts[me]));
  }
  for (int s = 1; s < p; ++s) {
    const auto dst = static_cast<std::size_t>(wrap(r + s, p));
    const auto src = static_cast<std::size_t>(wrap(r - s, p));
    link.exchange(in + link.bytes(send_at[dst]), send_counts[dst], static_cast<int>(dst),
                  out + link.bytes(recv_at[src]), recv_counts[src], static_cast<int>(src));
  }
}

CollectiveFingerprint all_to_all_v_fingerprint(const CollectiveArgs& args,
                                               const PerPeerCounts& counts, int group_size) {
  const auto p = static_cast<std::size_t>(group_size);
  RANKLAB_CHECK(counts.send.size() == p && counts.recv.size() == p,
                "all_to_all_v: {} send counts and {} receive counts for a group of {} ranks",
                counts.send.size(), counts.recv.size(), p);
  RANKLAB_CHECK(args.input.dtype == args.output.dtype, "all_to_all_v: input is {} but output is {}",
                to_string(args.input.dtype), to_string(args.output.dtype));
  const std::size_t sent = std::accumulate(counts.send.begin(), counts.send.end(), std::size_t{0});
  const std::size_t received =
      std::accumulate(counts.recv.begin(), counts.recv.end(), std::size_t{0});
  RANKLAB_CHECK(sent == args.input.count && received == args.output.count,
                "all_to_all_v: the counts add up to {} sent and {} received, but the input holds "
                "{} and the output {} elements",
                sent, received, args.input.count, args.output.count);
  CollectiveFingerprint fingerprint;
  fingerprint.signature.op = OpKind::all_to_all;
  fingerprint.signature.dtype = args.input.dtype;
  fingerprint.algorithm = std::string(to_string(Algorithm::pairwise));
  fingerprint.per_peer_counts = true;
  return fingerprint;
}

void run_all_to_all_v(Backend& backend, const CollectiveArgs& args, const PerPeerCounts& counts,
                      int tag) {
  PeerLink link(backend, tag, args.input.dtype, ReduceOp::sum,
                fmt::format("all_to_all_v via pairwise in {}", backend.name()));
  all_to_all_v_pairwise(link, args.input, counts.send, args.output, counts.recv);
}

void all_to_all_pairwise(PeerLink& link, const CollectiveArgs& args) {
  const std::vector<std::size_t> counts(static_cast<std::size_t>(link.size()),
                                        args.input.count / static_cast<std::size_t>(link.size()));
  all_to_all_v_pairwise(link, args.input, counts, args.output, counts);
}

}  // namespace ranklab
