#include "traces/messages.hpp"

#include <algorithm>

namespace ranklab {
namespace {

/// The send that `recv` names, if the trace holds it and it was sent to this receiver.
/// A rank's events are in rank_seq order (the reader sorts them): event_index finds it.
const TraceEvent* find_send(const Trace& trace, const TraceEvent& recv, std::size_t* index) {
  const MessageId id = recv.msg;
  if (!id.valid() || id.sender < 0 || static_cast<std::size_t>(id.sender) >= trace.ranks.size()) {
    return nullptr;
  }
  const auto& events = trace.ranks[static_cast<std::size_t>(id.sender)];
  const std::size_t found = event_index(events, id.sender_seq);
  if (found == events.size()) return nullptr;
  const TraceEvent& send = events[found];
  if (send.op != OpKind::send || send.peer != recv.rank || recv.peer != id.sender) return nullptr;
  *index = found;
  return &send;
}

}  // namespace

std::size_t event_index(const std::vector<TraceEvent>& events, std::uint64_t seq) {
  if (seq < events.size() && events[static_cast<std::size_t>(seq)].rank_seq == seq) {
    return static_cast<std::size_t>(seq);
  }
  const auto it = std::lower_bound(
      events.begin(), events.end(), seq,
      [](const TraceEvent& event, std::uint64_t s) { return event.rank_seq < s; });
  if (it == events.end() || it->rank_seq != seq) return events.size();
  return static_cast<std::size_t>(it - events.begin());
}

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
