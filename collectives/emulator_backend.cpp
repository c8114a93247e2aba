#include "collectives/emulator_backend.hpp"

#include <utility>

#include "comm/errors.hpp"
#include "emulator/options.hpp"
#include "emulator/rank.hpp"
#include "emulator/request.hpp"

namespace ranklab {
namespace {

// A fabric request as a Work's implementation. It fits inside the Work (a pointer and a
// shared_ptr), so an emulator call allocates no handle.
class EmulatorWork final : public detail::WorkImpl {
 public:
  explicit EmulatorWork(Request request) : request_(std::move(request)) {}

  void wait() override { request_.wait(); }
  bool wait_for(std::chrono::milliseconds timeout) override { return request_.wait_for(timeout); }
  bool test() override { return request_.test(); }
  RecvStatus status() const override { return request_.status(); }

 private:
  Request request_;
};

Work to_work(Request request) { return Work::make<EmulatorWork>(std::move(request)); }

class EmulatorBackend final : public Backend {
 public:
  EmulatorBackend(RankContext& context, const Group& group)
      : context_(context), group_(group), rank_(group.group_rank(context.rank())) {}

  int rank() const override { return rank_; }
  int size() const override { return group_.size(); }
  // The Communicator checked the arguments of every call (collectives/communicator.cpp); the
  // fabric checks those of its own callers again (RankContext, replay).
  int global_rank(int group_rank) const override { return group_.global_rank(group_rank); }
  int global_size() const override { return context_.world_size(); }
  const std::string& name() const override { return group_.name(); }

  Work isend(ConstBuffer data, int dst, int tag) override {
    return to_work(context_.isend(group_, data, dst, tag));
  }
  Work irecv(MutableBuffer data, int src, int tag) override {
    return to_work(context_.irecv(group_, data, src, tag));
  }
  // The blocking forms wait on the fabric's requests directly: no Work, no indirect call
  // per message (an 8-rank ring all_reduce of one float sends 112 of them).
  void send(ConstBuffer data, int dst, int tag) override { context_.send(group_, data, dst, tag); }
  RecvStatus recv(MutableBuffer data, int src, int tag) override {
    return context_.recv(group_, data, src, tag);
  }
  RecvStatus exchange(ConstBuffer out, int dst, MutableBuffer in, int src, int tag) override {
    Request received = context_.irecv(group_, in, src, tag);
    Request sent = context_.isend(group_, out, dst, tag);
    received.wait();
    sent.wait();
    return received.status();
  }
  Work native_collective(const CollectiveArgs& args) override {
    return to_work(context_.icollective(group_, args));
  }
  void native_collective_blocking(const CollectiveArgs& args, const SourceSite& site) override {
    context_.set_call_site(site);
    context_.collective(group_, args);
  }
  std::uint64_t begin_collective(const CollectiveFingerprint& fingerprint) override {
    return context_.begin_collective(group_, fingerprint);
  }
  void end_collective() noexcept override { context_.end_collective(); }
  // The fabric keeps the rank's current site and stamps every operation it posts with it,
  // the algorithms' messages included: the one copy of it.
  void set_call_site(const SourceSite& site) override { context_.set_call_site(site); }
  std::shared_ptr<Backend> new_group(std::string_view kind,
                                     std::span<const int> global_ranks) override {
    return std::make_shared<EmulatorBackend>(context_, context_.new_group(kind, global_ranks));
  }
  void yield() override { context_.yield(); }
  void compute(ComputeItem item) override { context_.compute(std::move(item)); }
  DeviceId device() const override {
    return {.kind = context_.options().device, .index = context_.rank()};
  }

 private:
  RankContext& context_;
  const Group& group_;
  int rank_;
};

static_assert(sizeof(EmulatorWork) <= Work::kInlineBytes,
              "an emulator request must fit inside a Work: no allocation per call");

}  // namespace

std::shared_ptr<Backend> make_emulator_backend(RankContext& context, const Group& group) {
  return std::make_shared<EmulatorBackend>(context, group);
}

void run_on_world(RankContext& context, Algorithm algorithm,
                  const std::function<void(Communicator&)>& program) {
  EmulatorBackend backend(context, context.world());
  // Owned by no one (the aliasing constructor, an empty owner): the backend ends with this
  // frame, as `context` does, which it refers to.
  Communicator world(std::shared_ptr<Backend>(std::shared_ptr<void>(), &backend), algorithm);
  program(world);
}

}  // namespace ranklab
