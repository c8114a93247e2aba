// One rank's handle on the fabric: its rank, groups, and the fabric's point-to-point and
// native collective operations. The emulator's own API: the emulator backend
// (collectives/emulator_backend.cpp), replay and the emulator's tests are built on it. Rank
// programs never see it; they get a Communicator (collectives/cluster.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "comm/buffer.hpp"
#include "comm/call_site.hpp"
#include "comm/collective_args.hpp"
#include "comm/fingerprint.hpp"
#include "comm/group.hpp"
#include "emulator/request.hpp"
#include "traces/event.hpp"

namespace ranklab {

class Fabric;
struct ClusterOptions;

/// One rank's handle on the cluster, valid for the duration of its rank function. Every
/// blocking call may throw DeadlockError, PeerAbortedError, MismatchError or TimeoutError;
/// letting them propagate out of the rank function is the right thing to do.
class RankContext {
 public:
  RankContext(Fabric& fabric, int rank);

  int rank() const { return rank_; }
  int world_size() const;
  const Group& world() const;
  const ClusterOptions& options() const;

  /// The group of `kind` over `global_ranks` (in that order), named `kind[r0,r1,...]`.
  /// Local and deterministic: every member asking for the same kind and ranks gets the
  /// same group, with no communication. The calling rank need not be a member.
  const Group& new_group(std::string_view kind, std::span<const int> global_ranks);

  /// Sends `data` to group rank `dst`. Completes per the cluster's send mode.
  Request isend(const Group& group, ConstBuffer data, int dst, int tag);
  /// Receives into `data` from group rank `src` (or kAnySource) with `tag` (or kAnyTag).
  Request irecv(const Group& group, MutableBuffer data, int src, int tag);
  void send(const Group& group, ConstBuffer data, int dst, int tag);
  RecvStatus recv(const Group& group, MutableBuffer data, int src, int tag);

  /// Posts this rank's part of the group's next collective (the fabric's native,
  /// rendezvous implementation): signatures are checked, reduction runs in ascending
  /// group rank, and every member is released together.
  Request icollective(const Group& group, const CollectiveArgs& args);
  void collective(const Group& group, const CollectiveArgs& args);

  /// Posts this rank's fingerprint of its next collective on `group` (the communicator
  /// does, for every collective it runs): throws MismatchError at once if a member that
  /// posted before disagrees. Never blocks. Returns the call's sequence number in the group.
  std::uint64_t begin_collective(const Group& group, const CollectiveFingerprint& fingerprint);
  /// This rank has finished (or abandoned) the collective it began.
  void end_collective() noexcept;

  void barrier(const Group& group);
  void all_reduce(const Group& group, MutableBuffer data, ReduceOp op);

  /// Records a compute event (format 1.2) in the trace: it goes on this rank's next
  /// operation (or, at its end, on its last). Costs nothing when the run records no trace.
  void compute(ComputeItem item);
  /// The same for work as a trace holds it (replay re-issues a recording's compute).
  void compute_work(const ComputeWork& work);

  /// Lets other ranks run. A rank that polls with test() must yield between polls.
  void yield();

  /// For replay: this rank's next operation gets `rank_seq` (at least the next number it
  /// would get), so a replayed trace keeps its recorded numbering, gaps included.
  void set_next_rank_seq(std::uint64_t rank_seq);

  /// Where this rank's next operations are called from (the emulator backend passes on the
  /// Communicator's call site; replay the recorded one), until set again. Inline, into the
  /// fabric's slot for it: every Communicator call sets it.
  void set_call_site(const SourceSite& site) {
    if (call_site_ != nullptr) *call_site_ = site;
  }

 private:
  /// Applies a kill or delay fault due before the next post (fault injection only).
  void inject_faults(const std::function<std::string()>& describe);
  /// inject_faults for `group`'s next collective; called only when the run injects faults.
  void inject_collective_faults(const Group& group, const CollectiveArgs& args);
  /// collective() in a run with a fault plan, out of line.
  [[gnu::noinline]] void collective_with_faults(const Group& group, const CollectiveArgs& args);
  /// yield(); `polling` false for a delay fault's yields, which a settling failure waits for.
  void yield_turn(bool polling);

  Fabric& fabric_;
  int rank_;
  SourceSite* call_site_;  ///< Fabric::call_site_slot: null when the run records no sites
};

/// The calling fiber's rank, like this_fiber / this_actor. Only valid inside a rank. The
/// one way from inside a rank program to the emulator's own facilities (its options, the
/// fabric's calls), for the emulator's tests and tools: rank programs need none of it.
namespace this_rank {
RankContext& context();
int rank();
int world_size();
void yield();
}  // namespace this_rank

}  // namespace ranklab
