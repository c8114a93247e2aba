// The seam between the Communicator and the machinery underneath it: the emulator's fabric
// (collectives/emulator_backend.hpp) or real processes (MPI). A rank program is a function
// of a Communicator&; the Communicator checks arguments, picks the algorithm and runs it as
// calls on a Backend, so the same program runs on either. The interface uses only the
// shared vocabulary of comm/ (buffers, collective arguments, fingerprints, receive
// matching, errors) and Work: no emulator type crosses it.
//
// The contract a backend keeps:
//  - Ranks are group ranks unless named global; a non-member's rank() is -1 and it may only
//    ask for size, names and new_group.
//  - isend/irecv: MPI's matching (FIFO per source and tag, kAnySource, kAnyTag never
//    matching tags from kFirstReservedTag up); a receive buffer may be larger than the
//    message; a smaller one or a different dtype is a MismatchError on both sides.
//  - native_collective: the backend's own one-step collective, with the same signature
//    checks; a reduction combines the members' buffers in ascending group rank whatever
//    the arrival order, so `direct` gives bitwise the same result on every backend.
//  - begin_collective/end_collective bracket every collective, native or not: the
//    fingerprint check (MismatchError naming every member's call) and the call's sequence
//    number, from which the algorithms' tags are made.
//  - Asynchronous completion only through Work: a backend returns Work::make<Impl>(...)
//    with its own detail::WorkImpl (collectives/work.hpp), or an empty Work when the call
//    has already completed.
//  - The call site: where the rank program made the call now being served. The Communicator
//    hands it down once per call: to set_call_site before every call it makes on the
//    backend, or as native_collective_blocking's argument (the blocking native call, the
//    common one, takes a single virtual call). A backend records it with the operations it
//    posts.
//  - rank() and size() never change for a backend (the Communicator reads its rank once).
//  - Failures are the exceptions of comm/errors.hpp (DeadlockError, PeerAbortedError,
//    MismatchError, TimeoutError) and UsageError for bad arguments.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "collectives/scratch_pool.hpp"
#include "collectives/work.hpp"
#include "comm/buffer.hpp"
#include "comm/call_site.hpp"
#include "comm/collective_args.hpp"
#include "comm/device.hpp"
#include "comm/fingerprint.hpp"
#include "traces/event.hpp"

namespace ranklab {

/// One process group as seen by one of its members (or by a non-member, whose rank() is
/// -1 and which may only ask for size and names). Ranks are group ranks unless named global.
/// The Communicator checks every call's arguments (peer, tag, group, count) before it reaches
/// a backend, with one wording for all (collectives/communicator.cpp): a backend trusts them.
class Backend {
 public:
  virtual ~Backend() = default;

  virtual int rank() const = 0;  ///< group rank of the caller, -1 if not a member
  virtual int size() const = 0;
  virtual int global_rank(int group_rank) const = 0;  ///< group_rank in [0, size())
  virtual int global_size() const = 0;  ///< size of the world
  virtual const std::string& name() const = 0;

  virtual Work isend(ConstBuffer data, int dst, int tag) = 0;
  virtual Work irecv(MutableBuffer data, int src, int tag) = 0;

  /// The blocking point-to-point forms (the Communicator's send/recv, every message of the
  /// algorithms). By default through isend/irecv and their Work; a backend that can block
  /// without making a handle overrides them (the emulator makes no Work per message; MPI
  /// has MPI_Send, MPI_Recv, MPI_Sendrecv).
  virtual void send(ConstBuffer data, int dst, int tag) { isend(data, dst, tag).wait(); }
  virtual RecvStatus recv(MutableBuffer data, int src, int tag) {
    Work work = irecv(data, src, tag);
    work.wait();
    return work.status();
  }
  /// Receives `in` from `src` while sending `out` to `dst` (MPI_Sendrecv): the receive is
  /// posted first, then the send, and both are waited for, the receive first.
  virtual RecvStatus exchange(ConstBuffer out, int dst, MutableBuffer in, int src, int tag) {
    Work received = irecv(in, src, tag);
    Work sent = isend(out, dst, tag);
    received.wait();
    sent.wait();
    return received.status();
  }

  /// The backend's own one-step implementation of a collective (the fabric's rendezvous;
  /// MPI's own collective), with signature checks across members.
  virtual Work native_collective(const CollectiveArgs& args) = 0;
  /// The same, waiting for it, made at `site`: the blocking calls' path, one virtual call
  /// with no handle to make and the site handed down with it (set_call_site is not called).
  /// (No default: a body here would have the caller test for it before every call.)
  virtual void native_collective_blocking(const CollectiveArgs& args, const SourceSite& site) = 0;

  /// Posts the caller's fingerprint of its next collective on this group, checked at once
  /// against the members that posted theirs (on disagreement, MismatchError naming every
  /// member's call, once the backend has every call or can go no further; never blocks
  /// otherwise).
  /// Returns the call's sequence number in the group, from which internal tags are made
  /// (collectives/tags.hpp). Every begin_collective is paired with end_collective.
  virtual std::uint64_t begin_collective(const CollectiveFingerprint& fingerprint) = 0;
  /// The caller has finished (or abandoned) its part of the collective it began.
  virtual void end_collective() noexcept = 0;

  /// The group of `kind` over `global_ranks` (in order), as the caller sees it.
  virtual std::shared_ptr<Backend> new_group(std::string_view kind,
                                             std::span<const int> global_ranks) = 0;

  /// The calling rank's device (comm/device.hpp): the emulator's per-rank device from its
  /// ClusterOptions; `cpu` unless the backend says otherwise.
  virtual DeviceId device() const { return {}; }

  /// Lets other ranks run (polling loops must call it).
  virtual void yield() = 0;

  /// The caller computed `item` (a compute event for the trace, traces/FORMAT.md 1.2): the
  /// emulator records it on the rank's next operation; a backend with no trace ignores it.
  virtual void compute(ComputeItem item) { (void)item; }

  /// The point-to-point algorithms' scratch buffers for this rank and group, kept between
  /// calls (scratch_pool.hpp says why). Every backend has one; it is not part of what a
  /// backend implements.
  ScratchPool& scratch() { return scratch_; }

  /// Where the rank program made the calls that follow (backend.hpp's contract), until set
  /// again: the Communicator's funnel sets it before every call but the blocking native
  /// one. A backend keeps it where it records operations (the emulator's fabric has a slot
  /// per rank; MPI's backend a copy).
  virtual void set_call_site(const SourceSite& site) = 0;

 private:
  ScratchPool scratch_;
};

}  // namespace ranklab
