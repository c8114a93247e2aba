// The communicator API that rank programs are written against: torch.distributed / c10d
// in C++. A rank program is a function of a Communicator& (its world); the same function
// runs on the emulator (Cluster::run) or on another backend, since a Communicator sees only
// the Backend interface (backend.hpp). A Communicator is one process group as seen by one
// member; ranks are group ranks. Every call goes through one funnel (NCCL's
// ncclEnqueueCheck idea) that checks arguments, picks the algorithm, and runs it on the
// backend.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/backend.hpp"
#include "collectives/options.hpp"
#include "collectives/work.hpp"
#include "comm/buffer.hpp"

namespace ranklab {

struct PerPeerCounts;

/// Every blocking call may throw DeadlockError, PeerAbortedError, MismatchError,
/// TimeoutError (the run is ending; let them propagate) or UsageError (bad arguments).
class Communicator {
 public:
  /// The group `backend` stands for; `algorithm` is the default for every collective whose
  /// options say `automatic` (and for groups made from this one). Rank programs do not make
  /// one: Cluster::run (or another backend's runner) hands each rank its world.
  Communicator(std::shared_ptr<Backend> backend, Algorithm algorithm);

  int rank() const { return backend_->rank(); }  ///< -1 if the caller is not a member
  int size() const { return backend_->size(); }
  bool is_member() const { return rank() >= 0; }
  const std::string& name() const { return backend_->name(); }
  int global_rank(int group_rank) const { return backend_->global_rank(group_rank); }
  Algorithm default_algorithm() const { return algorithm_; }

  /// The group of `kind` over `global_ranks`, named `kind[r0,...]`, like torch's new_group.
  /// Every rank may call it; a non-member gets a Communicator with rank() == -1.
  Communicator new_group(std::span<const int> global_ranks, std::string_view kind = "group");
  /// MPI_Comm_split: members with the same `color` form a group ordered by (`key`, rank).
  /// Collective over this communicator.
  Communicator split(int color, int key);

  // Point-to-point. Untyped core, then typed conveniences. Tags are below
  // kFirstReservedTag (collectives/tags.hpp; recv also takes kAnyTag): the tags above are the
  // collectives' own. A receive buffer may be larger than the message, as in MPI: status()
  // says how many elements arrived. A smaller buffer or a different element type fails both
  // sides with MismatchError naming them.
  Work isend(ConstBuffer data, int dst, int tag = 0);
  Work irecv(MutableBuffer data, int src, int tag = 0);
  void send(ConstBuffer data, int dst, int tag = 0) { isend(data, dst, tag).wait(); }
  RecvStatus recv(MutableBuffer data, int src, int tag = 0);

  template <typename T>
  void send(std::span<const T> data, int dst, int tag = 0) { send(as_buffer(data), dst, tag); }
  template <typename T>
  RecvStatus recv(std::span<T> data, int src, int tag = 0) {
    return recv(as_mutable_buffer(data), src, tag);
  }
  template <typename T>
  Work isend(std::span<const T> data, int dst, int tag = 0) { return isend(as_buffer(data), dst, tag); }
  template <typename T>
  Work irecv(std::span<T> data, int src, int tag = 0) {
    return irecv(as_mutable_buffer(data), src, tag);
  }

  // Collectives: the i-prefixed forms return a Work; the plain forms wait for it. With a
  // point-to-point algorithm (ring, tree, ...) the i-form runs the whole message script
  // before it returns, so its Work is already complete; only `direct` overlaps.
  Work ibarrier(const BarrierOptions& options = {});
  Work iall_reduce(MutableBuffer data, const AllReduceOptions& options = {});
  Work ibroadcast(MutableBuffer data, const BroadcastOptions& options = {});
  Work ireduce(MutableBuffer data, const ReduceOptions& options = {});
  Work iall_gather(ConstBuffer input, MutableBuffer output, const AllGatherOptions& options = {});
  Work ireduce_scatter(ConstBuffer input, MutableBuffer output,
                       const ReduceScatterOptions& options = {});
  Work igather(ConstBuffer input, MutableBuffer output, const GatherOptions& options = {});
  Work iscatter(ConstBuffer input, MutableBuffer output, const ScatterOptions& options = {});
  Work iall_to_all(ConstBuffer input, MutableBuffer output, const AllToAllOptions& options = {});
  /// all_to_all with uneven splits (MPI_Alltoallv; torch's all_to_all_single with split
  /// sizes): sends send_counts[j] elements of `input`, packed in rank order, to rank j and
  /// receives recv_counts[j] elements from rank j into `output`, packed likewise. Rank i's
  /// send_counts[j] must equal rank j's recv_counts[i], or rank j fails with MismatchError
  /// naming both. Runs pairwise whatever the algorithm (the fabric has no native uneven
  /// all_to_all), and has completed when it returns.
  Work iall_to_all_v(ConstBuffer input, std::span<const std::size_t> send_counts,
                     MutableBuffer output, std::span<const std::size_t> recv_counts,
                     const AllToAllOptions& options = {});

  void barrier(const BarrierOptions& options = {});
  void all_reduce(MutableBuffer data, const AllReduceOptions& options = {});
  void broadcast(MutableBuffer data, const BroadcastOptions& options = {});
  void reduce(MutableBuffer data, const ReduceOptions& options = {});
  void all_gather(ConstBuffer input, MutableBuffer output, const AllGatherOptions& options = {});
  void reduce_scatter(ConstBuffer input, MutableBuffer output,
                      const ReduceScatterOptions& options = {});
  void gather(ConstBuffer input, MutableBuffer output, const GatherOptions& options = {});
  void scatter(ConstBuffer input, MutableBuffer output, const ScatterOptions& options = {});
  void all_to_all(ConstBuffer input, MutableBuffer output, const AllToAllOptions& options = {});
  void all_to_all_v(ConstBuffer input, std::span<const std::size_t> send_counts,
                    MutableBuffer output, std::span<const std::size_t> recv_counts,
                    const AllToAllOptions& options = {}) {
    iall_to_all_v(input, send_counts, output, recv_counts, options).wait();
  }

  template <typename T>
  void all_reduce(std::span<T> data, const AllReduceOptions& options = {}) {
    all_reduce(as_mutable_buffer(data), options);
  }
  template <typename T>
  void broadcast(std::span<T> data, const BroadcastOptions& options = {}) {
    broadcast(as_mutable_buffer(data), options);
  }
  template <typename T>
  void all_gather(std::span<const T> input, std::span<T> output,
                  const AllGatherOptions& options = {}) {
    all_gather(as_buffer(input), as_mutable_buffer(output), options);
  }
  template <typename T>
  void reduce_scatter(std::span<const T> input, std::span<T> output,
                      const ReduceScatterOptions& options = {}) {
    reduce_scatter(as_buffer(input), as_mutable_buffer(output), options);
  }

  /// Lets other ranks run; call it between test() polls.
  void yield() { backend_->yield(); }

  Backend& backend() { return *backend_; }

 private:
  /// The funnel: every collective comes through here. It checks the arguments, posts the
  /// call's fingerprint (checked at once against the other members'), then runs the native
  /// collective or the algorithm's messages. `per_peer` carries all_to_all_v's counts.
  /// `wait`: the plain (blocking) forms, which a native call serves without a handle.
  enum class Completion { handle, wait };
  Work run_collective(const CollectiveArgs& args, Algorithm requested,
                      Completion completion = Completion::handle,
                      const PerPeerCounts* per_peer = nullptr);
  void require_member(std::string_view call) const;

  std::shared_ptr<Backend> backend_;
  Algorithm algorithm_;
};

}  // namespace ranklab
