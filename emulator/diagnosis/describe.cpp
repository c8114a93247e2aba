#include "emulator/diagnosis/describe.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "traces/event_text.hpp"

namespace ranklab::diagnosis {

std::string describe_operation(const PendingOp& op) {
  const Group& g = *op.group;
  switch (op.kind) {
    case OpKind::send:
      return fmt::format("send to rank {} tag {} in {} ({} x {}), op #{}", g.global_rank(op.peer),
                         op.tag, g.name(), op.count, to_string(op.dtype), op.rank_seq);
    case OpKind::recv:
      return fmt::format("recv from {} tag {} in {} ({} x {}), op #{}",
                         op.peer == kAnySource ? std::string("any source")
                                               : fmt::format("rank {}", g.global_rank(op.peer)),
                         op.tag == kAnyTag ? std::string("any") : std::to_string(op.tag), g.name(),
                         op.count, to_string(op.dtype), op.rank_seq);
    default:
      return fmt::format("{} #{} in {}: {}, op #{}", to_string(op.kind), op.coll_seq, g.name(),
                         describe(op.signature), op.rank_seq);
  }
}

std::string describe_pending(const PendingOp& op) {
  return describe_operation(op) + describe_site(to_call_site(op.site));
}

ReportedOperation report_operation(const PendingOp& op) {
  return {.rank = op.rank,
          .op = std::string(to_string(op.kind)),
          .group = op.group->name(),
          .call = describe_operation(op),
          .site = to_call_site(op.site)};
}

Culprit naming(Culprit culprit, const std::vector<const PendingOp*>& ops) {
  for (const PendingOp* op : ops) {
    if (op == nullptr) continue;
    culprit.operations.push_back(report_operation(*op));
    const std::string& group = op->group->name();
    if (std::find(culprit.groups.begin(), culprit.groups.end(), group) == culprit.groups.end()) {
      culprit.groups.push_back(group);
    }
  }
  return culprit;
}

}  // namespace ranklab::diagnosis
