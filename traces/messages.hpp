// Point-to-point messages as pairs: each completed receive joined to the send whose
// message id (`msg`, traces/FORMAT.md) it carries. The exporters draw these pairs as
// arrows; stats counts the receives whose send is missing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "traces/event.hpp"

namespace ranklab {

/// Where one event sits in a Trace: `trace.ranks[rank][index]`.
struct EventRef {
  int rank = 0;
  std::size_t index = 0;

  friend bool operator==(const EventRef&, const EventRef&) = default;
};

/// One message whose send and receive are both in the trace.
struct MessageLink {
  MessageId id;
  EventRef send;
  EventRef recv;
};

/// Every message of a trace that can be drawn from its send to its receive.
struct MessageLinks {
  std::vector<MessageLink> links;  ///< in receiver order: by rank, then rank_seq
  /// Completed receives whose `msg` names no send to this rank from its `peer`: the send's
  /// line was removed, or the trace was cut. They are counted, never guessed at.
  std::uint64_t dangling_receives = 0;
};

/// The index in `events` (one rank's, in rank_seq order) of the event numbered `seq`, or
/// events.size() if there is none. Ranks number their operations 0, 1, 2, ... unless a
/// hand-edited trace has gaps, so the event at index `seq` is looked at first: one cache
/// line, where a binary search over a rank of 2,000 events touches eleven (at 512 ranks,
/// a tenth of a replay's time went there).
std::size_t event_index(const std::vector<TraceEvent>& events, std::uint64_t seq);

/// Joins receives to sends. Sends without a receive (pending, or eager sends whose
/// receiver never came) are normal in a deadlocked run and are simply not linked.
MessageLinks link_messages(const Trace& trace);

}  // namespace ranklab
