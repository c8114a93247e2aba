#include "emulator/rank.hpp"

#include <boost/fiber/operations.hpp>

#include <utility>

#include "comm/errors.hpp"
#include "emulator/fabric.hpp"
#include "emulator/scheduler.hpp"

namespace ranklab {

RankContext::RankContext(Fabric& fabric, int rank)
    : fabric_(fabric), rank_(rank), call_site_(fabric.call_site_slot(rank)) {}

int RankContext::world_size() const { return fabric_.world_size(); }
const Group& RankContext::world() const { return fabric_.world(); }
const ClusterOptions& RankContext::options() const { return fabric_.options(); }

const Group& RankContext::new_group(std::string_view kind, std::span<const int> global_ranks) {
  return fabric_.group(kind, global_ranks);
}

namespace {

// The global rank of group rank `r` for a fault's description; the fabric checks it later.
int global_or_invalid(const Group& group, int r) {
  return r >= 0 && r < group.size() ? group.global_rank(r) : kNoRank;
}

}  // namespace

void RankContext::inject_faults(const std::function<std::string()>& describe) {
  const std::uint64_t delay = fabric_.inject_before_post(rank_, describe);
  // A delay's yields are not the program polling: a settling failure waits for them.
  for (std::uint64_t i = 0; i < delay; ++i) yield_turn(/*polling=*/false);
}

Request RankContext::isend(const Group& group, ConstBuffer data, int dst, int tag) {
  if (fabric_.injects_faults()) [[unlikely]] {
    inject_faults([&] {
      return fmt::format("send to rank {} tag {} in {} ({} x {})", global_or_invalid(group, dst), tag,
                         group.name(), data.count, to_string(data.dtype));
    });
  }
  return fabric_.isend(rank_, group, data, dst, tag);
}

Request RankContext::irecv(const Group& group, MutableBuffer data, int src, int tag) {
  if (fabric_.injects_faults()) [[unlikely]] {
    inject_faults([&] {
      return fmt::format("recv from {} tag {} in {} ({} x {})",
                         src == kAnySource ? std::string("any source")
                                           : fmt::format("rank {}", global_or_invalid(group, src)),
                         tag == kAnyTag ? std::string("any") : std::to_string(tag), group.name(),
                         data.count, to_string(data.dtype));
    });
  }
  return fabric_.irecv(rank_, group, data, src, tag);
}

void RankContext::send(const Group& group, ConstBuffer data, int dst, int tag) {
  isend(group, data, dst, tag).wait();
}

RecvStatus RankContext::recv(const Group& group, MutableBuffer data, int src, int tag) {
  Request request = irecv(group, data, src, tag);
  request.wait();
  return request.status();
}

void RankContext::inject_collective_faults(const Group& group, const CollectiveArgs& args) {
  inject_faults([&] {
    return fmt::format("{} #{} in {}", to_string(args.op),
                       fabric_.next_collective_number(rank_, group), group.name());
  });
}

// The fault check in line, the injection out of line: a run with no fault plan pays a test.
Request RankContext::icollective(const Group& group, const CollectiveArgs& args) {
  if (fabric_.injects_faults()) [[unlikely]] inject_collective_faults(group, args);
  return fabric_.icollective(rank_, group, args);
}

// Both ways end in a tail call: the blocking path needs no frame of its own here.
void RankContext::collective(const Group& group, const CollectiveArgs& args) {
  if (fabric_.injects_faults()) [[unlikely]] return collective_with_faults(group, args);
  fabric_.collective(rank_, group, args);
}

void RankContext::collective_with_faults(const Group& group, const CollectiveArgs& args) {
  inject_collective_faults(group, args);
  fabric_.collective(rank_, group, args);
}

void RankContext::barrier(const Group& group) {
  collective(group, CollectiveArgs{.op = OpKind::barrier});
}

void RankContext::all_reduce(const Group& group, MutableBuffer data, ReduceOp op) {
  collective(group,
             CollectiveArgs{.op = OpKind::all_reduce, .reduce_op = op, .input = data, .output = data});
}

void RankContext::compute(ComputeItem item) {
  ComputeWork work;
  work.add(std::move(item));
  fabric_.compute(rank_, work);
}

void RankContext::compute_work(const ComputeWork& work) { fabric_.compute(rank_, work); }

void RankContext::set_next_rank_seq(std::uint64_t rank_seq) {
  fabric_.set_next_seq(rank_, rank_seq);
}

void RankContext::yield() { yield_turn(/*polling=*/true); }

void RankContext::yield_turn(bool polling) {
  fabric_.check_alive(rank_, polling);
  boost::this_fiber::properties<RankProperties>().yielding = true;
  boost::this_fiber::yield();
}

namespace this_rank {

RankContext& context() {
  const RankProperties* props = RankScheduler::current_rank();
  RANKLAB_CHECK(props != nullptr && props->context != nullptr,
                "this_rank: called outside a rank of a running cluster");
  return *props->context;
}

int rank() { return context().rank(); }
int world_size() { return context().world_size(); }
void yield() { context().yield(); }

}  // namespace this_rank
}  // namespace ranklab
