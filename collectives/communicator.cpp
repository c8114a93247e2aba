#include "collectives/communicator.hpp"

#include <algorithm>
#include <cstdint>
#include <initializer_list>

#include "collectives/algorithms/algorithm.hpp"
#include "collectives/staging.hpp"
#include "collectives/tags.hpp"
#include "comm/errors.hpp"

namespace ranklab {
namespace {

// The caller's part of one collective: posts its fingerprint on entry and tells the backend
// when the caller leaves, normally or by an exception (the deadlock-time order check needs
// to know which collective a blocked rank is in).
class CollectiveScope {
 public:
  CollectiveScope(Backend& backend, const CollectiveFingerprint& fingerprint)
      : backend_(backend), sequence_(backend.begin_collective(fingerprint)) {}
  ~CollectiveScope() { backend_.end_collective(); }
  CollectiveScope(const CollectiveScope&) = delete;
  CollectiveScope& operator=(const CollectiveScope&) = delete;

  int tag() const { return collective_tag(sequence_); }

 private:
  Backend& backend_;
  std::uint64_t sequence_;
};

// The argument checks of a point-to-point call, for every backend (which then trusts them):
// the peer is a rank of the group (or any source, for a receive), the buffer holds its
// count. The caller's group membership and tag are checked before.
void check_peer_and_count(const Communicator& comm, int peer, const void* data,
                          std::size_t count, bool receive) {
  const std::string_view call = receive ? "recv" : "send";
  RANKLAB_CHECK((peer >= 0 && peer < comm.size()) || (receive && peer == kAnySource),
                "rank {}: {} {} rank {} of group {}, which has {} ranks",
                comm.global_rank(comm.rank()), call, receive ? "from" : "to", peer, comm.name(),
                comm.size());
  RANKLAB_CHECK(data != nullptr || count == 0, "rank {}: {} {} a null buffer",
                comm.global_rank(comm.rank()), call, receive ? "into" : "of");
}

void check_user_tag(int tag, bool receive) {
  RANKLAB_CHECK(is_user_tag(tag) || (receive && tag == kAnyTag),
                "tag {} is outside the user range [0, {}): higher tags are reserved for "
                "collectives (collectives/tags.hpp)",
                tag, kFirstReservedTag);
}

}  // namespace

Communicator::Communicator(std::shared_ptr<Backend> backend, Algorithm algorithm)
    : Communicator(std::move(backend), algorithm, std::make_shared<Labels>()) {}

Communicator::Communicator(std::shared_ptr<Backend> backend, Algorithm algorithm,
                           std::shared_ptr<Labels> labels)
    : backend_(std::move(backend)),
      rank_(backend_->rank()),
      algorithm_(algorithm),
      labels_(std::move(labels)) {
  RANKLAB_CHECK(algorithm_ != Algorithm::automatic,
                "a communicator's default algorithm must be a concrete one");
  // What run_blocking asks of every call, worked out once: which requests run natively.
  static_assert(static_cast<unsigned>(Algorithm::pairwise) < 32, "algorithm_bit needs a bit each");
  if (is_member()) {
    for (const Algorithm requested : {Algorithm::automatic, Algorithm::direct}) {
      if (runs_direct(requested)) native_requests_ |= algorithm_bit(requested);
    }
  }
}

int Communicator::global_rank(int group_rank) const {
  RANKLAB_CHECK(group_rank >= 0 && group_rank < size(), "rank {} is outside group {} of {} ranks",
                group_rank, name(), size());
  return backend_->global_rank(group_rank);
}

void Communicator::check_member(std::string_view call) const {
  RANKLAB_CHECK(is_member(), "{} on group {}, which the caller is not a member of", call, name());
}

Communicator Communicator::new_group(std::span<const int> global_ranks, std::string_view kind) {
  return Communicator(backend_->new_group(kind, global_ranks), algorithm_, labels_);
}

Communicator::Annotation Communicator::annotate(std::string label) {
  return Annotation(*labels_, intern_label(std::move(label)));
}

Communicator::CallerScope Communicator::called_from(SourceSite site) {
  return CallerScope(*labels_, site);
}

SourceSite Communicator::foreign_site() const {
  SourceSite site = *labels_->caller;
  if (labels_->current != nullptr) site.label = labels_->current;
  return site;
}

Communicator Communicator::split(int color, int key, Where where) {
  require_member("split");
  // Everyone learns everyone's (color, key) with one all_gather, then builds its group.
  const std::int64_t mine[2] = {color, key};
  std::vector<std::int64_t> all(2 * static_cast<std::size_t>(size()));
  all_gather(ConstBuffer{mine, 2, DataType::i64}, as_mutable_buffer(std::span(all)),
             {.algorithm = Algorithm::direct}, where);
  std::vector<std::pair<std::int64_t, int>> members;  // (key, group rank)
  for (int r = 0; r < size(); ++r) {
    if (all[2 * static_cast<std::size_t>(r)] == color) {
      members.emplace_back(all[2 * static_cast<std::size_t>(r) + 1], r);
    }
  }
  std::sort(members.begin(), members.end());
  std::vector<int> ranks;
  for (const auto& [k, r] : members) ranks.push_back(global_rank(r));
  return new_group(ranks, fmt::format("{}.split{}", name(), color));
}

// Point-to-point calls on device buffers stage them (collectives/staging.hpp): a send copies
// its data to a host buffer first, a receive copies what arrived back to the device.
Work Communicator::isend(ConstBuffer data, int dst, int tag, Where where) {
  require_member("send");
  check_user_tag(tag, /*receive=*/false);
  check_peer_and_count(*this, dst, data.data, data.count, /*receive=*/false);
  enter(where);
  if (data.device == nullptr) return backend_->isend(data, dst, tag);
  HostStaging staging(*backend_, data, {});
  Work sent = backend_->isend(staging.input(), dst, tag);
  return staged_work(std::move(sent), std::move(staging), /*receive=*/false);
}

Work Communicator::irecv(MutableBuffer data, int src, int tag, Where where) {
  require_member("recv");
  check_user_tag(tag, /*receive=*/true);
  check_peer_and_count(*this, src, data.data, data.count, /*receive=*/true);
  enter(where);
  if (data.device == nullptr) return backend_->irecv(data, src, tag);
  HostStaging staging(*backend_, {}, data);
  Work received = backend_->irecv(staging.output(), src, tag);
  return staged_work(std::move(received), std::move(staging), /*receive=*/true);
}

void Communicator::send(ConstBuffer data, int dst, int tag, Where where) {
  require_member("send");
  check_user_tag(tag, /*receive=*/false);
  check_peer_and_count(*this, dst, data.data, data.count, /*receive=*/false);
  enter(where);
  if (data.device == nullptr) {
    backend_->send(data, dst, tag);
    return;
  }
  HostStaging staging(*backend_, data, {});
  backend_->send(staging.input(), dst, tag);
}

RecvStatus Communicator::recv(MutableBuffer data, int src, int tag, Where where) {
  require_member("recv");
  check_user_tag(tag, /*receive=*/true);
  check_peer_and_count(*this, src, data.data, data.count, /*receive=*/true);
  enter(where);
  if (data.device == nullptr) return backend_->recv(data, src, tag);
  HostStaging staging(*backend_, {}, data);
  const RecvStatus status = backend_->recv(staging.output(), src, tag);
  staging.finish(status.count);
  return status;
}

Work Communicator::run_collective(const CollectiveArgs& args, Algorithm requested, Where where,
                                  Completion completion, const PerPeerCounts* per_peer) {
  require_member(args.op);
  // An algorithm's messages are the call's: they carry its site.
  const SourceSite site = site_of(where);
  backend_->set_call_site(site);
  if (!HostStaging::needed(args.input, args.output)) {
    return run_host_collective(args, requested, completion, per_peer, site);
  }
  // Device buffers: the whole collective, whatever its algorithm, runs on host copies.
  HostStaging staging(*backend_, args.input, args.output);
  CollectiveArgs host = args;
  host.input = staging.input();
  host.output = staging.output();
  Work work = run_host_collective(host, requested, completion, per_peer, site);
  if (work.has_handle()) {
    return staged_work(std::move(work), std::move(staging), /*receive=*/false);
  }
  staging.finish();
  return Work();
}

void Communicator::run_blocking_otherwise(const CollectiveArgs& args, Algorithm requested,
                                          Where where) {
  run_collective(args, requested, where, Completion::wait).wait();
}

Work Communicator::run_host_collective(const CollectiveArgs& args, Algorithm requested,
                                       Completion completion, const PerPeerCounts* per_peer,
                                       const SourceSite& site) {
  if (per_peer != nullptr) {
    RANKLAB_CHECK(requested == Algorithm::automatic || requested == Algorithm::direct ||
                      requested == Algorithm::pairwise,
                  "algorithm {} does not implement all_to_all_v (pairwise does)",
                  to_string(requested));
    const CollectiveScope scope(*backend_, all_to_all_v_fingerprint(args, *per_peer, size()));
    run_all_to_all_v(*backend_, args, *per_peer, scope.tag());
    return Work();
  }
  const Algorithm algorithm = runs_direct(requested)
                                  ? Algorithm::direct
                                  : resolve_algorithm(args.op, requested, algorithm_, size());
  if (algorithm == Algorithm::direct) {
    // The fabric's native all_to_all copies block by block between the members' buffers, so
    // one buffer for input and output would be overwritten before it is sent. (Shapes first:
    // a bad shape is the better message.)
    if (args.op == OpKind::all_to_all) make_signature(args, size(), rank());
    RANKLAB_CHECK(args.op != OpKind::all_to_all || size() == 1 ||
                      !overlaps(args.input.data, args.input.bytes(), args.output.data,
                                args.output.bytes()),
                  "all_to_all in place runs only with algorithm pairwise, not direct");
    // A native call checks its shapes and posts its fingerprint as it joins: one trip
    // into the fabric, not three.
    if (completion == Completion::wait) {
      backend_->native_collective_blocking(args, site);
      return Work();
    }
    return backend_->native_collective(args);
  }
  // Shape checks, with the same messages as the native path.
  const CollectiveFingerprint fingerprint{.signature = make_signature(args, size(), rank()),
                                          .algorithm = std::string(to_string(algorithm))};
  const CollectiveScope scope(*backend_, fingerprint);
  run_p2p_algorithm(*backend_, algorithm, args, scope.tag());
  return Work();
}

Work Communicator::ibarrier(const BarrierOptions& options, Where where) {
  return run_collective(collective_calls::barrier(), options.algorithm, where);
}

Work Communicator::iall_reduce(MutableBuffer data, const AllReduceOptions& options, Where where) {
  return run_collective(collective_calls::all_reduce(data, options), options.algorithm, where);
}

Work Communicator::ibroadcast(MutableBuffer data, const BroadcastOptions& options, Where where) {
  return run_collective(collective_calls::broadcast(data, options), options.algorithm, where);
}

Work Communicator::ireduce(MutableBuffer data, const ReduceOptions& options, Where where) {
  return run_collective(collective_calls::reduce(data, options), options.algorithm, where);
}

Work Communicator::iall_gather(ConstBuffer input, MutableBuffer output,
                               const AllGatherOptions& options, Where where) {
  return run_collective(collective_calls::all_gather(input, output), options.algorithm, where);
}

Work Communicator::ireduce_scatter(ConstBuffer input, MutableBuffer output,
                                   const ReduceScatterOptions& options, Where where) {
  return run_collective(collective_calls::reduce_scatter(input, output, options),
                        options.algorithm, where);
}

Work Communicator::igather(ConstBuffer input, MutableBuffer output, const GatherOptions& options, Where where) {
  return run_collective(collective_calls::gather(input, output, options), options.algorithm, where);
}

Work Communicator::iscatter(ConstBuffer input, MutableBuffer output,
                            const ScatterOptions& options, Where where) {
  return run_collective(collective_calls::scatter(input, output, options), options.algorithm,
                        where);
}

Work Communicator::iall_to_all(ConstBuffer input, MutableBuffer output,
                               const AllToAllOptions& options, Where where) {
  return run_collective(collective_calls::all_to_all(input, output), options.algorithm, where);
}

Work Communicator::iall_to_all_v(ConstBuffer input, std::span<const std::size_t> send_counts,
                                 MutableBuffer output, std::span<const std::size_t> recv_counts,
                                 const AllToAllOptions& options, Where where) {
  const PerPeerCounts counts{send_counts, recv_counts};
  return run_collective(collective_calls::all_to_all(input, output), options.algorithm, where,
                        Completion::handle, &counts);
}

}  // namespace ranklab
