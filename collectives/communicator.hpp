// The communicator API that rank programs are written against: torch.distributed / c10d
// in C++. A rank program is a function of a Communicator& (its world); the same function
// runs on the emulator (Cluster::run) or on another backend, since a Communicator sees only
// the Backend interface (backend.hpp). A Communicator is one process group as seen by one
// member; ranks are group ranks. Every call goes through one funnel (NCCL's
// ncclEnqueueCheck idea) that checks arguments, picks the algorithm, and runs it on the
// backend.
#pragma once

#include <cstdint>
#include <memory>
#include <source_location>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collectives/backend.hpp"
#include "collectives/buffer_range.hpp"
#include "collectives/collective_calls.hpp"
#include "collectives/options.hpp"
#include "collectives/staging.hpp"
#include "collectives/work.hpp"
#include "comm/buffer.hpp"

namespace ranklab {

struct PerPeerCounts;

/// Every blocking call may throw DeadlockError, PeerAbortedError, MismatchError,
/// TimeoutError (the run is ending; let them propagate) or UsageError (bad arguments).
class Communicator {
 public:
  /// Every call's last parameter, defaulted: where the rank program made the call. Leave it
  /// out; the reports and the trace name it (a wrapper of the model passes its own caller's).
  using Where = std::source_location;

  class Annotation;
  class CallerScope;

  /// The group `backend` stands for; `algorithm` is the default for every collective whose
  /// options say `automatic` (and for groups made from this one). Rank programs do not make
  /// one: Cluster::run (or another backend's runner) hands each rank its world.
  Communicator(std::shared_ptr<Backend> backend, Algorithm algorithm);

  int rank() const { return rank_; }  ///< -1 if the caller is not a member
  int size() const { return backend_->size(); }
  bool is_member() const { return rank() >= 0; }
  const std::string& name() const { return backend_->name(); }
  int global_rank(int group_rank) const;
  Algorithm default_algorithm() const { return algorithm_; }
  /// The rank's device (the cluster's per-rank device, comm/device.hpp): where its tensors
  /// live. Buffers on it say so (ConstBuffer::device) and are staged through host memory.
  DeviceId device() const { return backend_->device(); }

  /// The group of `kind` over `global_ranks`, named `kind[r0,...]`, like torch's new_group.
  /// Every rank may call it; a non-member gets a Communicator with rank() == -1.
  Communicator new_group(std::span<const int> global_ranks, std::string_view kind = "group");
  /// MPI_Comm_split: members with the same `color` form a group ordered by (`key`, rank).
  /// Collective over this communicator.
  Communicator split(int color, int key, Where where = Where::current());

  // Point-to-point. Untyped core, then the typed forms. Tags are below
  // kFirstReservedTag (collectives/tags.hpp; recv also takes kAnyTag): the tags above are the
  // collectives' own. A receive buffer may be larger than the message, as in MPI: status()
  // says how many elements arrived. A smaller buffer or a different element type fails both
  // sides with MismatchError naming them.
  Work isend(ConstBuffer data, int dst, int tag = 0, Where where = Where::current());
  Work irecv(MutableBuffer data, int src, int tag = 0, Where where = Where::current());
  void send(ConstBuffer data, int dst, int tag = 0, Where where = Where::current());
  RecvStatus recv(MutableBuffer data, int src, int tag = 0, Where where = Where::current());

  // Typed: any contiguous range of a supported element type (collectives/buffer_range.hpp),
  // a std::vector as well as a std::span; what is written into must be writable.
  template <SendRange R>
  void send(const R& data, int dst, int tag = 0, Where where = Where::current()) {
    send(buffer_of(data), dst, tag, where);
  }
  template <typename R>
  requires RecvRange<R> RecvStatus recv(R&& data, int src, int tag = 0,
                                        Where where = Where::current()) {
    return recv(mutable_buffer_of(data), src, tag, where);
  }
  template <SendRange R>
  Work isend(const R& data, int dst, int tag = 0, Where where = Where::current()) {
    return isend(buffer_of(data), dst, tag, where);
  }
  template <typename R>
  requires RecvRange<R> Work irecv(R&& data, int src, int tag = 0, Where where = Where::current()) {
    return irecv(mutable_buffer_of(data), src, tag, where);
  }

  // Collectives: the i-prefixed forms return a Work; the plain forms wait for it. With a
  // point-to-point algorithm (ring, tree, ...) the i-form runs the whole message script
  // before it returns, so its Work is already complete; only `direct` overlaps.
  Work ibarrier(const BarrierOptions& options = {}, Where where = Where::current());
  Work iall_reduce(MutableBuffer data, const AllReduceOptions& options = {}, Where where = Where::current());
  Work ibroadcast(MutableBuffer data, const BroadcastOptions& options = {}, Where where = Where::current());
  Work ireduce(MutableBuffer data, const ReduceOptions& options = {}, Where where = Where::current());
  Work iall_gather(ConstBuffer input, MutableBuffer output, const AllGatherOptions& options = {}, Where where = Where::current());
  Work ireduce_scatter(ConstBuffer input, MutableBuffer output,
                       const ReduceScatterOptions& options = {}, Where where = Where::current());
  Work igather(ConstBuffer input, MutableBuffer output, const GatherOptions& options = {}, Where where = Where::current());
  Work iscatter(ConstBuffer input, MutableBuffer output, const ScatterOptions& options = {}, Where where = Where::current());
  Work iall_to_all(ConstBuffer input, MutableBuffer output, const AllToAllOptions& options = {}, Where where = Where::current());
  /// all_to_all with uneven splits (MPI_Alltoallv; torch's all_to_all_single with split
  /// sizes): sends send_counts[j] elements of `input`, packed in rank order, to rank j and
  /// receives recv_counts[j] elements from rank j into `output`, packed likewise. Rank i's
  /// send_counts[j] must equal rank j's recv_counts[i], or rank j fails with MismatchError
  /// naming both. Runs pairwise whatever the algorithm (the fabric has no native uneven
  /// all_to_all), and has completed when it returns.
  Work iall_to_all_v(ConstBuffer input, std::span<const std::size_t> send_counts,
                     MutableBuffer output, std::span<const std::size_t> recv_counts,
                     const AllToAllOptions& options = {}, Where where = Where::current());

  // The plain forms, inline: the call's arguments are built in the caller's frame and go
  // down by reference to run_blocking, whose common case is one virtual call.
  void barrier(const BarrierOptions& options = {}, Where where = Where::current()) {
    run_blocking(collective_calls::barrier(), options.algorithm, where);
  }
  void all_reduce(MutableBuffer data, const AllReduceOptions& options = {},
                  Where where = Where::current()) {
    run_blocking(collective_calls::all_reduce(data, options), options.algorithm, where);
  }
  void broadcast(MutableBuffer data, const BroadcastOptions& options = {},
                 Where where = Where::current()) {
    run_blocking(collective_calls::broadcast(data, options), options.algorithm, where);
  }
  void reduce(MutableBuffer data, const ReduceOptions& options = {},
              Where where = Where::current()) {
    run_blocking(collective_calls::reduce(data, options), options.algorithm, where);
  }
  void all_gather(ConstBuffer input, MutableBuffer output, const AllGatherOptions& options = {},
                  Where where = Where::current()) {
    run_blocking(collective_calls::all_gather(input, output), options.algorithm, where);
  }
  void reduce_scatter(ConstBuffer input, MutableBuffer output,
                      const ReduceScatterOptions& options = {}, Where where = Where::current()) {
    run_blocking(collective_calls::reduce_scatter(input, output, options), options.algorithm,
                 where);
  }
  void gather(ConstBuffer input, MutableBuffer output, const GatherOptions& options = {},
              Where where = Where::current()) {
    run_blocking(collective_calls::gather(input, output, options), options.algorithm, where);
  }
  void scatter(ConstBuffer input, MutableBuffer output, const ScatterOptions& options = {},
               Where where = Where::current()) {
    run_blocking(collective_calls::scatter(input, output, options), options.algorithm, where);
  }
  void all_to_all(ConstBuffer input, MutableBuffer output, const AllToAllOptions& options = {},
                  Where where = Where::current()) {
    run_blocking(collective_calls::all_to_all(input, output), options.algorithm, where);
  }
  void all_to_all_v(ConstBuffer input, std::span<const std::size_t> send_counts,
                    MutableBuffer output, std::span<const std::size_t> recv_counts,
                    const AllToAllOptions& options = {}, Where where = Where::current()) {
    iall_to_all_v(input, send_counts, output, recv_counts, options, where).wait();
  }

  // Typed collectives, as the point-to-point calls: in place on one range, or from an input
  // range into an output range of the same element type.
  template <typename R>
  requires RecvRange<R> Work iall_reduce(R&& data, const AllReduceOptions& options = {},
                                         Where where = Where::current()) {
    return iall_reduce(mutable_buffer_of(data), options, where);
  }
  template <typename R>
  requires RecvRange<R>
  void all_reduce(R&& data, const AllReduceOptions& options = {}, Where where = Where::current()) {
    all_reduce(mutable_buffer_of(data), options, where);
  }
  template <typename R>
  requires RecvRange<R> Work ibroadcast(R&& data, const BroadcastOptions& options = {},
                                        Where where = Where::current()) {
    return ibroadcast(mutable_buffer_of(data), options, where);
  }
  template <typename R>
  requires RecvRange<R>
  void broadcast(R&& data, const BroadcastOptions& options = {}, Where where = Where::current()) {
    broadcast(mutable_buffer_of(data), options, where);
  }
  template <typename R>
  requires RecvRange<R> Work ireduce(R&& data, const ReduceOptions& options = {},
                                     Where where = Where::current()) {
    return ireduce(mutable_buffer_of(data), options, where);
  }
  template <typename R>
  requires RecvRange<R>
  void reduce(R&& data, const ReduceOptions& options = {}, Where where = Where::current()) {
    reduce(mutable_buffer_of(data), options, where);
  }
  template <SendRange In, typename Out>
  requires RecvRange<Out> && SameElements<In, Out> Work
  iall_gather(const In& input, Out&& output, const AllGatherOptions& options = {},
              Where where = Where::current()) {
    return iall_gather(buffer_of(input), mutable_buffer_of(output), options, where);
  }
  template <SendRange In, typename Out>
  requires RecvRange<Out> && SameElements<In, Out>
  void all_gather(const In& input, Out&& output, const AllGatherOptions& options = {},
                  Where where = Where::current()) {
    all_gather(buffer_of(input), mutable_buffer_of(output), options, where);
  }
  template <SendRange In, typename Out>
  requires RecvRange<Out> && SameElements<In, Out> Work
  ireduce_scatter(const In& input, Out&& output, const ReduceScatterOptions& options = {},
                  Where where = Where::current()) {
    return ireduce_scatter(buffer_of(input), mutable_buffer_of(output), options, where);
  }
  template <SendRange In, typename Out>
  requires RecvRange<Out> && SameElements<In, Out>
  void reduce_scatter(const In& input, Out&& output, const ReduceScatterOptions& options = {},
                      Where where = Where::current()) {
    reduce_scatter(buffer_of(input), mutable_buffer_of(output), options, where);
  }
  template <SendRange In, typename Out>
  requires RecvRange<Out> && SameElements<In, Out> Work igather(const In& input, Out&& output,
                                                                const GatherOptions& options = {},
                                                                Where where = Where::current()) {
    return igather(buffer_of(input), mutable_buffer_of(output), options, where);
  }
  template <SendRange In, typename Out>
  requires RecvRange<Out> && SameElements<In, Out>
  void gather(const In& input, Out&& output, const GatherOptions& options = {},
              Where where = Where::current()) {
    gather(buffer_of(input), mutable_buffer_of(output), options, where);
  }
  template <SendRange In, typename Out>
  requires RecvRange<Out> && SameElements<In, Out> Work iscatter(const In& input, Out&& output,
                                                                 const ScatterOptions& options = {},
                                                                 Where where = Where::current()) {
    return iscatter(buffer_of(input), mutable_buffer_of(output), options, where);
  }
  template <SendRange In, typename Out>
  requires RecvRange<Out> && SameElements<In, Out>
  void scatter(const In& input, Out&& output, const ScatterOptions& options = {},
               Where where = Where::current()) {
    scatter(buffer_of(input), mutable_buffer_of(output), options, where);
  }
  template <SendRange In, typename Out>
  requires RecvRange<Out> && SameElements<In, Out> Work
  iall_to_all(const In& input, Out&& output, const AllToAllOptions& options = {},
              Where where = Where::current()) {
    return iall_to_all(buffer_of(input), mutable_buffer_of(output), options, where);
  }
  template <SendRange In, typename Out>
  requires RecvRange<Out> && SameElements<In, Out>
  void all_to_all(const In& input, Out&& output, const AllToAllOptions& options = {},
                  Where where = Where::current()) {
    all_to_all(buffer_of(input), mutable_buffer_of(output), options, where);
  }
  template <SendRange In, typename Out>
  requires RecvRange<Out> && SameElements<In, Out> Work
  iall_to_all_v(const In& input, std::span<const std::size_t> send_counts, Out&& output,
                std::span<const std::size_t> recv_counts, const AllToAllOptions& options = {},
                Where where = Where::current()) {
    return iall_to_all_v(buffer_of(input), send_counts, mutable_buffer_of(output), recv_counts,
                         options, where);
  }
  template <SendRange In, typename Out>
  requires RecvRange<Out> && SameElements<In, Out>
  void all_to_all_v(const In& input, std::span<const std::size_t> send_counts, Out&& output,
                    std::span<const std::size_t> recv_counts, const AllToAllOptions& options = {},
                    Where where = Where::current()) {
    all_to_all_v(buffer_of(input), send_counts, mutable_buffer_of(output), recv_counts, options,
                 where);
  }

  /// Names the calls this rank makes, on this communicator and every group made from it,
  /// until the returned scope ends, in the program's own terms ("TP all_reduce of layer 2
  /// forward"): traces record it with the call site and reports show it. Scopes nest; the
  /// innermost names the calls.
  [[nodiscard]] Annotation annotate(std::string label);
  /// Records the calls this rank makes, on this communicator and every group made from it,
  /// at `site` instead of their C++ caller until the returned scope ends: for a program in
  /// another language, whose own lines the reports must name (the PyTorch bridge hands each
  /// call's script file:line). `site`'s strings must outlive the run (intern_label).
  [[nodiscard]] CallerScope called_from(SourceSite site);

  /// Lets other ranks run; call it between test() polls.
  void yield() { backend_->yield(); }

  /// Records computation in the trace (a compute event, traces/FORMAT.md 1.2), placed
  /// before this rank's next operation: `label` and its FLOPs (a cost model's FLOP rate
  /// turns them into time), or its seconds. Free when the run records no trace.
  void compute(std::string label, double flops) {
    backend_->compute({.label = std::move(label), .flops = flops});
  }
  void compute_seconds(std::string label, double seconds) {
    backend_->compute({.label = std::move(label), .seconds = seconds});
  }
  /// A compute event with every field (layer, micro-batch, chunk), as the training step
  /// records its layer passes.
  void compute(ComputeItem item) { backend_->compute(std::move(item)); }

  Backend& backend() { return *backend_; }

 private:
  /// The label of one rank's calls, shared by its world and every group made from it. It
  /// points to an interned string (intern_label), which outlives every scope and report.
  struct Labels {
    const std::string* current = nullptr;
    const SourceSite* caller = nullptr;  ///< called_from's site; null: the C++ caller's
  };
  Communicator(std::shared_ptr<Backend> backend, Algorithm algorithm,
               std::shared_ptr<Labels> labels);
  /// Where the call was made, as the backend records it: the site and the current label.
  SourceSite site_of(Where where) const {
    if (labels_->caller != nullptr) [[unlikely]] return foreign_site();
    return SourceSite::from(where, labels_->current);
  }
  /// site_of for a call in called_from's scope, out of line.
  SourceSite foreign_site() const;
  /// Tells the backend where the call it is about to serve was made.
  void enter(Where where) { backend_->set_call_site(site_of(where)); }

  /// The funnel: every collective comes through here. It checks the arguments, posts the
  /// call's fingerprint (checked at once against the other members'), then runs the native
  /// collective or the algorithm's messages. `per_peer` carries all_to_all_v's counts.
  /// `wait`: the plain (blocking) forms, which a native call serves without a handle.
  enum class Completion { handle, wait };
  Work run_collective(const CollectiveArgs& args, Algorithm requested, Where where,
                      Completion completion = Completion::handle,
                      const PerPeerCounts* per_peer = nullptr);
  /// The plain (blocking) forms: run_collective(..., Completion::wait).wait(), with its
  /// common case (a member's native call on host buffers) one virtual call on the backend,
  /// with no Work and the site handed down with it. Inline, the rest out of line: in the
  /// caller the tests fold to one (an all_reduce of a host range tests one bit) and the
  /// call goes straight to the backend (issue 19 §2). All_to_all's aliasing check is
  /// run_host_collective's, a non-member's error run_collective's.
  void run_blocking(const CollectiveArgs& args, Algorithm requested, Where where) {
    if (blocks_natively(requested) && args.op != OpKind::all_to_all &&
        !HostStaging::needed(args.input, args.output)) [[likely]] {
      backend_->native_collective_blocking(args, site_of(where));
      return;
    }
    run_blocking_otherwise(args, requested, where);
  }
  /// run_blocking's other cases.
  void run_blocking_otherwise(const CollectiveArgs& args, Algorithm requested, Where where);
  static constexpr std::uint32_t algorithm_bit(Algorithm algorithm) {
    return std::uint32_t{1} << static_cast<unsigned>(algorithm);
  }
  /// Whether a blocking call asking for `requested` is a member's native call: one test of
  /// what the constructor worked out, the same for every call.
  bool blocks_natively(Algorithm requested) const {
    return (native_requests_ & algorithm_bit(requested)) != 0;
  }
  /// `requested` is `direct`, or `automatic` with `direct` the default. (Every collective
  /// has `direct`, so asking for it, or for the default when that is `direct`, needs no
  /// look-up: resolve_algorithm gives the same answer.) Inline: every call asks.
  bool runs_direct(Algorithm requested) const {
    return requested == Algorithm::direct ||
           (requested == Algorithm::automatic && algorithm_ == Algorithm::direct);
  }
  /// The funnel's part on host buffers; run_collective stages device buffers around it.
  /// `site` is the call's, already set on the backend (a blocking native call hands it on).
  Work run_host_collective(const CollectiveArgs& args, Algorithm requested, Completion completion,
                           const PerPeerCounts* per_peer, const SourceSite& site);
  /// Throws UsageError naming `call` unless the caller is a member of the group.
  void require_member(std::string_view call) const {
    if (!is_member()) [[unlikely]] check_member(call);
  }
  void require_member(OpKind op) const {
    if (!is_member()) [[unlikely]] check_member(to_string(op));
  }
  /// require_member's check, out of line (it formats the message).
  void check_member(std::string_view call) const;

  std::shared_ptr<Backend> backend_;
  int rank_;  ///< the backend's, which never changes: every call asks whether it is a member
  Algorithm algorithm_;
  std::shared_ptr<Labels> labels_;
  /// The requested algorithms (algorithm_bit) a blocking call serves natively: `direct`,
  /// and `automatic` where the default is `direct`; none for a non-member.
  std::uint32_t native_requests_ = 0;
};

/// The scope of Communicator::annotate: restores the enclosing label when it ends.
class [[nodiscard]] Communicator::Annotation {
 public:
  Annotation(const Annotation&) = delete;
  Annotation& operator=(const Annotation&) = delete;
  ~Annotation() { labels_.current = enclosing_; }

 private:
  friend class Communicator;
  Annotation(Labels& labels, const std::string* label)
      : labels_(labels), enclosing_(labels.current) {
    labels_.current = label;
  }

  Labels& labels_;
  const std::string* enclosing_;
};

/// The scope of Communicator::called_from: restores the enclosing site when it ends.
class [[nodiscard]] Communicator::CallerScope {
 public:
  CallerScope(const CallerScope&) = delete;
  CallerScope& operator=(const CallerScope&) = delete;
  ~CallerScope() { labels_.caller = enclosing_; }

 private:
  friend class Communicator;
  CallerScope(Labels& labels, SourceSite site)
      : labels_(labels), site_(site), enclosing_(labels.caller) {
    labels_.caller = &site_;
  }

  Labels& labels_;
  SourceSite site_;
  const SourceSite* enclosing_;
};

}  // namespace ranklab
