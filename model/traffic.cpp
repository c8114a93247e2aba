#include "model/traffic.hpp"

#include <fmt/format.h>

#include "model/schedule_builders.hpp"
#include "traces/error.hpp"

namespace ranklab {

OpTally KindTraffic::total() const {
  OpTally out = all_reduce;
  out += send;
  out += recv;
  out += all_gather;
  out += reduce_scatter;
  out += other;
  return out;
}

KindTraffic& KindTraffic::operator+=(const KindTraffic& o) {
  all_reduce += o.all_reduce;
  send += o.send;
  recv += o.recv;
  all_gather += o.all_gather;
  reduce_scatter += o.reduce_scatter;
  other += o.other;
  return *this;
}

std::optional<GroupKind> group_kind_of(std::string_view group_name) {
  const std::string_view name = group_kind(group_name);
  if (name.size() == group_name.size()) return std::nullopt;  // no '[': world
  for (const GroupKind kind : kGroupKinds) {
    if (name == to_string(kind)) return kind;
  }
  return std::nullopt;
}

std::vector<RankTraffic> count_traffic(const Trace& trace) {
  std::vector<std::optional<GroupKind>> kinds;
  for (const TraceGroup& group : trace.header.groups) kinds.push_back(group_kind_of(group.name));
  std::vector<RankTraffic> out(trace.ranks.size());
  for (std::size_t rank = 0; rank < trace.ranks.size(); ++rank) {
    for (const TraceEvent& event : trace.ranks[rank]) {
      if (event.group >= kinds.size()) {
        throw TraceError(fmt::format("trace: rank {} event {} names group {}, the header lists {}",
                                     rank, event.rank_seq, event.group, kinds.size()));
      }
      if (event.status != OpStatus::completed || !kinds[event.group]) continue;
      KindTraffic& traffic = out[rank][*kinds[event.group]];
      OpTally& tally = event.op == OpKind::all_reduce       ? traffic.all_reduce
                       : event.op == OpKind::send           ? traffic.send
                       : event.op == OpKind::recv           ? traffic.recv
                       : event.op == OpKind::all_gather     ? traffic.all_gather
                       : event.op == OpKind::reduce_scatter ? traffic.reduce_scatter
                                                            : traffic.other;
      tally.add(event.bytes);
    }
  }
  return out;
}

KindTraffic total_traffic(const std::vector<RankTraffic>& ranks, GroupKind kind) {
  KindTraffic out;
  for (const RankTraffic& rank : ranks) out += rank[kind];
  return out;
}

namespace {

// The TP collectives of one pass of a chunk of `n` layers (virtual stage k of `count`) on a
// micro-batch whose full rows weigh `full` bytes.
void add_tp_pass(KindTraffic& tp, const Pass& pass, int k, int count, std::uint64_t n,
                 std::uint64_t full, int tp_size, TpComm comm) {
  const bool fwd = pass.kind == PassKind::forward;
  const std::uint64_t reductions = fwd || k > 0 ? n : n - 1;
  if (comm == TpComm::all_reduce) {
    for (std::uint64_t i = 0; i < reductions; ++i) tp.all_reduce.add(full);
    return;
  }
  const std::uint64_t shard = full / static_cast<std::uint64_t>(tp_size);
  // Forward: the stage input (unless the data), every inner layer input, the model output.
  // Backward: the output gradient (unless the loss's), every inner layer's.
  const bool edge_in = fwd ? k > 0 : k < count - 1;
  const std::uint64_t gathers = (edge_in ? 1 : 0) + (n - 1) + (fwd && k == count - 1 ? 1 : 0);
  for (std::uint64_t i = 0; i < gathers; ++i) tp.all_gather.add(shard);
  for (std::uint64_t i = 0; i < reductions; ++i) tp.reduce_scatter.add(shard);
}

}  // namespace

RankTraffic expected_traffic(const ParallelConfig& config, const ModelShape& shape,
                             std::size_t element_bytes, int rank, const StepOptions& options) {
  const Coords c = config.coords_of(rank);
  const ScheduleSpec spec = options.schedule_spec(config.pp);
  const auto bytes = [&](std::int64_t elements) {
    return static_cast<std::uint64_t>(elements) * element_bytes;
  };
  const std::uint64_t micro = bytes(shape.rows() / spec.microbatches * shape.hidden);
  const bool sp = options.tp_comm == TpComm::sequence_parallel && config.tp > 1;
  const std::uint64_t message = sp ? micro / static_cast<std::uint64_t>(config.tp) : micro;
  const auto chunk_layers = static_cast<std::uint64_t>(shape.layers / spec.virtual_count());
  const std::int64_t local = shape.inter / config.tp;
  const Schedule schedule = build_schedule(spec);
  RankTraffic out;
  for (const Step& step : schedule.stages[static_cast<std::size_t>(c.p)]) {
    if (step.compute) {
      if (config.tp == 1) continue;
      add_tp_pass(out[GroupKind::tp], step.pass, spec.virtual_stage(c.p, step.pass.chunk),
                  spec.virtual_count(), chunk_layers, micro, config.tp, options.tp_comm);
      continue;
    }
    for (const Transfer& t : step.transfers)
      (t.send ? out[GroupKind::pp].send : out[GroupKind::pp].recv).add(message);
  }
  if (config.dp > 1) {
    OpTally& dp = out[GroupKind::dp].all_reduce;
    const auto layers = static_cast<std::uint64_t>(shape.layers / config.pp);
    for (std::uint64_t l = 0; l < layers; ++l) {
      dp.add(bytes(local * shape.hidden));  // w1
      dp.add(bytes(local));                 // b1
      dp.add(bytes(shape.hidden * local));  // w2
      dp.add(bytes(shape.hidden));          // b2
    }
  }
  return out;
}

}  // namespace ranklab
