// The Backend over Open MPI: one GroupState's communicators as one process sees them.
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "collectives/mpi/detail/collective_plan.hpp"
#include "collectives/mpi/detail/fingerprint_exchange.hpp"
#include "collectives/mpi/detail/mpi_call.hpp"
#include "collectives/mpi/detail/mpi_work.hpp"
#include "collectives/mpi/detail/runtime.hpp"
#include "collectives/mpi/mpi_session.hpp"
#include "collectives/tags.hpp"
#include "comm/errors.hpp"
#include "traces/event_text.hpp"
#include "traces/hash.hpp"

namespace ranklab {
namespace {

using mpi_detail::GroupState;
using mpi_detail::Runtime;

class MpiBackend final : public Backend {
 public:
  MpiBackend(Runtime& runtime, std::shared_ptr<GroupState> group, const MpiOptions& options)
      : runtime_(runtime), group_(std::move(group)), options_(options) {}

  int rank() const override { return group_->rank; }
  int size() const override { return static_cast<int>(group_->ranks.size()); }
  // The Communicator checked the arguments of every call (collectives/communicator.cpp).
  int global_rank(int group_rank) const override {
    return group_->ranks[static_cast<std::size_t>(group_rank)];
  }
  int global_size() const override { return runtime_.world_size(); }
  DeviceId device() const override { return {options_.device, runtime_.world_rank()}; }
  const std::string& name() const override { return group_->name; }

  Work isend(ConstBuffer data, int dst, int tag) override {
    mpi_detail::MessageInfo info{.receive = false, .dtype = data.dtype, .count = data.count,
                                 .peer = dst, .tag = tag, .group = group_.get(),
                                 .timeout = options_.timeout, .site = call_site_};
    mpi_detail::WireHeader header{.dtype = static_cast<std::uint8_t>(data.dtype),
                                  .count = data.count};
    if (mpi_detail::Recorder* recorder = runtime_.recorder()) {
      TraceEvent event = point_to_point_event(OpKind::send, dst, tag, data.dtype, data.count);
      event.hash = payload_hash(data.as_bytes());
      event.has_hash = true;
      info.op = recorder->post(std::move(event));
      info.recorded = true;
      header.message = recorder->header_of(info.op);
    } else {
      info.op = runtime_.count_operation();
      header.message.sender_seq = info.op;
    }
    auto work = std::make_unique<mpi_detail::MessageWork>(runtime_, info, header, data);
    mpi_detail::WireBuffer& wire = work->wire();
    // MPI_Isend or, above the eager size, MPI_Issend (MpiOptions::eager_bytes).
    const auto post = data.bytes() > options_.eager_bytes ? MPI_Issend : MPI_Isend;
    const int code =
        post(wire.address(), wire.count(), wire.type(), dst, tag, comm_of(tag), work->request());
    return finish_post(code, std::move(work));
  }

  Work irecv(MutableBuffer data, int src, int tag) override {
    mpi_detail::MessageInfo info{.receive = true, .dtype = data.dtype, .count = data.count,
                                 .peer = src, .tag = tag, .group = group_.get(),
                                 .timeout = options_.timeout, .site = call_site_};
    if (mpi_detail::Recorder* recorder = runtime_.recorder()) {
      info.op = recorder->post(point_to_point_event(OpKind::recv, src, tag, data.dtype, data.count));
      info.recorded = true;
    } else {
      info.op = runtime_.count_operation();
    }
    // kAnyTag matches user tags only: the algorithms' messages travel on another communicator.
    const int source = src == kAnySource ? MPI_ANY_SOURCE : src;
    const int mpi_tag = tag == kAnyTag ? MPI_ANY_TAG : tag;
    auto work = std::make_unique<mpi_detail::MessageWork>(runtime_, info, data);
    mpi_detail::WireBuffer& wire = work->wire();
    const int code = MPI_Irecv(wire.address(), wire.count(), wire.type(), source, mpi_tag,
                               comm_of(tag), work->request());
    return finish_post(code, std::move(work));
  }

  Work native_collective(const CollectiveArgs& args) override {
    std::int64_t rank_seq = -1;
    auto plan = prepare(args, rank_seq);
    return Work(std::make_unique<mpi_detail::CollectiveWork>(
        runtime_, runtime_.start(group_, std::move(plan)), options_.timeout, rank_seq));
  }

  void native_collective_blocking(const CollectiveArgs& args, const SourceSite& site) override {
    call_site_ = site;
    std::int64_t rank_seq = -1;
    auto plan = prepare(args, rank_seq);
    // MPI's own collective, called as a program calls it when nothing else is in flight and
    // nothing times out (a blocked process cannot advance other staged calls, nor time
    // out). Every other call waits in Runtime::wait_until, which naps in long waits.
    if (options_.library_collectives && runtime_.idle() && options_.timeout.count() == 0) {
      runtime_.run_blocking(*plan);
      if (mpi_detail::Recorder* recorder = runtime_.recorder()) {
        recorder->complete(static_cast<std::uint64_t>(rank_seq));
        recorder->close(static_cast<std::uint64_t>(rank_seq));
      }
      return;
    }
    mpi_detail::CollectiveWork(runtime_, runtime_.start(group_, std::move(plan)), options_.timeout,
                               rank_seq)
        .wait();
  }

  std::uint64_t begin_collective(const CollectiveFingerprint& fingerprint) override {
    const std::uint64_t sequence = group_->next_sequence++;
    if (options_.check_collectives) {
      mpi_detail::exchange_fingerprints(runtime_, *group_, fingerprint, sequence,
                                        runtime_.next_operation(), call_site_, options_.timeout);
    }
    return sequence;
  }
  void end_collective() noexcept override {}
  void set_call_site(const SourceSite& site) override { call_site_ = site; }

  std::shared_ptr<Backend> new_group(std::string_view kind,
                                     std::span<const int> global_ranks) override {
    return std::make_shared<MpiBackend>(runtime_, runtime_.group(kind, global_ranks), options_);
  }

  void yield() override {
    runtime_.progress();
    std::this_thread::yield();
  }

 private:
  // A native call's shape checks, fingerprint and sequence number, its event when
  // recording (`rank_seq`), then its plan.
  std::unique_ptr<mpi_detail::CollectivePlan> prepare(const CollectiveArgs& args,
                                                      std::int64_t& rank_seq) {
    const CollectiveSignature signature = make_signature(args, size(), rank());
    const bool library = options_.library_collectives;
    const std::uint64_t sequence =
        begin_collective({.signature = signature, .algorithm = library ? "mpi" : "direct"});
    std::uint64_t operation = 0;
    if (mpi_detail::Recorder* recorder = runtime_.recorder()) {
      TraceEvent event;
      event.op = args.op;
      event.group = runtime_.trace_group(*group_);
      event.dtype = signature.dtype;
      event.count = signature.count;
      event.root = signature.root == kNoRank ? kNoRank : global_rank(signature.root);
      event.has_reduce_op = signature.has_reduce_op;
      event.reduce_op = signature.reduce_op;
      event.coll_seq = recorder->next_coll_seq(event.group);
      event.site = to_call_site(call_site_);
      event.has_hash = args.op != OpKind::barrier;
      event.hash = event.has_hash ? payload_hash(args.input.as_bytes()) : 0;
      operation = recorder->post(std::move(event));
      rank_seq = static_cast<std::int64_t>(operation);
    } else {
      operation = runtime_.count_operation();
    }
    auto plan = mpi_detail::make_plan(*group_, args, signature, library);
    // What a timeout or a failed stage names: the call as the emulator names it, with the
    // program's call site.
    plan->what = fmt::format("{} #{} in {}: {}, op #{}{}", to_string(args.op), sequence,
                             group_->name, describe(signature), operation,
                             describe_site(to_call_site(call_site_)));
    return plan;
  }

  // A point-to-point event as posted: a receive from any rank names no peer yet.
  TraceEvent point_to_point_event(OpKind op, int peer, int tag, DataType dtype,
                                  std::size_t count) {
    TraceEvent event;
    event.op = op;
    event.group = runtime_.trace_group(*group_);
    event.peer = peer == kAnySource ? kNoRank : global_rank(peer);
    event.tag = tag;
    event.dtype = dtype;
    event.count = count;
    event.site = to_call_site(call_site_);  // as the fabric records it
    return event;
  }

  MPI_Comm comm_of(int tag) const {
    return tag >= kFirstReservedTag ? group_->internal : group_->user;
  }

  Work finish_post(int code, std::unique_ptr<mpi_detail::MessageWork> work) {
    if (code != MPI_SUCCESS) mpi_detail::throw_mpi_error(code, work->describe());
    return Work(std::move(work));
  }

  Runtime& runtime_;
  std::shared_ptr<GroupState> group_;
  MpiOptions options_;  ///< groups made from this one inherit them
  SourceSite call_site_;  ///< where the program made the call being served (set_call_site)
};

}  // namespace

std::shared_ptr<Backend> make_mpi_backend(const MpiOptions& options) {
  Runtime& runtime = Runtime::instance();
  return std::make_shared<MpiBackend>(runtime, runtime.world(), options);
}

}  // namespace ranklab
