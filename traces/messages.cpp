#include "traces/messages.hpp"

#include <algorithm>

namespace ranklab {
namespace {

/// The send that `recv` names, if the trace holds it and it was sent to this receiver.
/// A rank's events are in rank_seq order (the reader sorts them), so this is a binary search.
const TraceEvent* find_send(const Trace& trace, const TraceEvent& recv, std::size_t* index) {
  const MessageId id = recv.msg;
  if (!id.valid() || id.sender < 0 || static_cast<std::size_t>(id.sender) >= trace.ranks.size()) {
    return nullptr;
  }
  const auto& events = trace.ranks[static_cast<std::size_t>(id.sender)];
  const auto it = std::lower_bound(
      events.begin(), events.end(), id.sender_seq,
      [](const TraceEvent& event, std::uint64_t seq) { return event.rank_seq < seq; });
  if (it == events.end() || it->rank_seq != id.sender_seq) return nullptr;
  if (it->op != OpKind::send || it->peer != recv.rank || recv.peer != id.sender) return nullptr;
  *index = static_cast<std::size_t>(it - events.begin());
  return &*it;
}

}  // namespace

MessageLinks link_messages(const Trace& trace) {
  MessageLinks result;
  for (std::size_t rank = 0; rank < trace.ranks.size(); ++rank) {
    const auto& events = trace.ranks[rank];
    for (std::size_t i = 0; i < events.size(); ++i) {
      const TraceEvent& event = events[i];
      if (event.op != OpKind::recv || event.status != OpStatus::completed) continue;
      std::size_t send_index = 0;
      if (find_send(trace, event, &send_index) == nullptr) {
        ++result.dangling_receives;
        continue;
      }
      result.links.push_back(
          {event.msg, {event.msg.sender, send_index}, {static_cast<int>(rank), i}});
    }
  }
  return result;
}

}  // namespace ranklab
