#include "model/traffic.hpp"

#include <fmt/format.h>

#include "traces/error.hpp"

namespace ranklab {

OpTally& OpTally::operator+=(const OpTally& other) {
  count += other.count;
  bytes += other.bytes;
  return *this;
}

OpTally KindTraffic::total() const {
  OpTally out = all_reduce;
  out += send;
  out += recv;
  out += other;
  return out;
}

KindTraffic& KindTraffic::operator+=(const KindTraffic& o) {
  all_reduce += o.all_reduce;
  send += o.send;
  recv += o.recv;
  other += o.other;
  return *this;
}

std::optional<GroupKind> group_kind_of(std::string_view group_name) {
  for (const GroupKind kind : kGroupKinds) {
    const std::string_view prefix = to_string(kind);
    if (group_name.size() > prefix.size() && group_name.starts_with(prefix) &&
        group_name[prefix.size()] == '[') {
      return kind;
    }
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
        throw UsageError(fmt::format("trace: rank {} event {} names group {}, the header lists {}",
                                     rank, event.rank_seq, event.group, kinds.size()));
      }
      if (event.status != OpStatus::completed || !kinds[event.group]) continue;
      KindTraffic& traffic = out[rank][*kinds[event.group]];
      OpTally& tally = event.op == OpKind::all_reduce ? traffic.all_reduce
                       : event.op == OpKind::send     ? traffic.send
                       : event.op == OpKind::recv     ? traffic.recv
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

RankTraffic expected_traffic(const ParallelConfig& config, const ModelShape& shape,
                             std::size_t element_bytes, int rank) {
  const Coords c = config.coords_of(rank);
  const auto layers = static_cast<std::uint64_t>(shape.layers / config.pp);
  const auto bytes = [&](std::int64_t elements) {
    return static_cast<std::uint64_t>(elements) * element_bytes;
  };
  const std::uint64_t activation = bytes(shape.rows() * shape.hidden);
  const std::int64_t local = shape.inter / config.tp;
  RankTraffic out;
  if (config.tp > 1) {
    const std::uint64_t backward = c.p == 0 ? layers - 1 : layers;
    out[GroupKind::tp].all_reduce = {layers + backward, (layers + backward) * activation};
  }
  if (config.pp > 1) {
    KindTraffic& pp = out[GroupKind::pp];
    if (c.p > 0) {  // activations in, their gradient back
      pp.recv.add(activation);
      pp.send.add(activation);
    }
    if (c.p < config.pp - 1) {  // activations out, their gradient in
      pp.send.add(activation);
      pp.recv.add(activation);
    }
  }
  if (config.dp > 1) {
    OpTally& dp = out[GroupKind::dp].all_reduce;
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
