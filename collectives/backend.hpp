// What a Communicator needs from the machinery underneath: the emulator's fabric today,
// MPI later. Model code never sees this interface, so it runs unchanged on either.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "collectives/scratch_pool.hpp"
#include "collectives/work.hpp"
#include "emulator/buffer.hpp"
#include "emulator/collective_args.hpp"
#include "emulator/fingerprint.hpp"

namespace ranklab {

/// One process group as seen by one of its members (or by a non-member, whose rank() is
/// -1 and which may only ask for size and names). Ranks are group ranks unless named global.
class Backend {
 public:
  virtual ~Backend() = default;

  virtual int rank() const = 0;  ///< group rank of the caller, -1 if not a member
  virtual int size() const = 0;
  virtual int global_rank(int group_rank) const = 0;
  virtual int global_size() const = 0;  ///< size of the world
  virtual const std::string& name() const = 0;

  virtual Work isend(ConstBuffer data, int dst, int tag) = 0;
  virtual Work irecv(MutableBuffer data, int src, int tag) = 0;

  /// The backend's own one-step implementation of a collective (the fabric's rendezvous;
  /// MPI's own collective), with signature checks across members.
  virtual Work native_collective(const CollectiveArgs& args) = 0;
  /// The same, waiting for it (the blocking calls' path: no handle to make).
  virtual void native_collective_blocking(const CollectiveArgs& args) {
    native_collective(args).wait();
  }

  /// Posts the caller's fingerprint of its next collective on this group, checked at once
  /// against the members that posted theirs (MismatchError on disagreement, never blocks).
  /// Returns the call's sequence number in the group, from which internal tags are made
  /// (collectives/tags.hpp). Every begin_collective is paired with end_collective.
  virtual std::uint64_t begin_collective(const CollectiveFingerprint& fingerprint) = 0;
  /// The caller has finished (or abandoned) its part of the collective it began.
  virtual void end_collective() noexcept = 0;

  /// The group of `kind` over `global_ranks` (in order), as the caller sees it.
  virtual std::shared_ptr<Backend> new_group(std::string_view kind,
                                             std::span<const int> global_ranks) = 0;

  /// Lets other ranks run (polling loops must call it).
  virtual void yield() = 0;

  /// The point-to-point algorithms' scratch buffers for this rank and group, kept between
  /// calls (scratch_pool.hpp says why). Every backend has one; it is not part of what a
  /// backend implements.
  ScratchPool& scratch() { return scratch_; }

 private:
  ScratchPool scratch_;
};

class RankContext;
class Group;

/// The backend of the emulator: a group of the fabric, used by the rank `context`.
std::shared_ptr<Backend> make_emulator_backend(RankContext& context, const Group& group);

}  // namespace ranklab
