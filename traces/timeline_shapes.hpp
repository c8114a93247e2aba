// What the exporters draw besides operations, decided once so the Perfetto JSON and the HTML
// report agree: where a message's arrow leaves and lands, and the compute slices of a timed
// trace.
#pragma once

#include <string>
#include <vector>

#include "traces/event.hpp"
#include "traces/messages.hpp"
#include "traces/timeline.hpp"

namespace ranklab {

/// A message's arrow on the axis, in ns. It leaves the send when the message leaves (once
/// both sides are posted: the later post, inside the send's slice) and lands on the
/// receive's completion (the end of its slice), so it never points back in time: a receive
/// completes no earlier than its send was posted, on either axis. Both ends sit at least
/// min(duration / 4, 1 ns) inside their slices, so a viewer binds each to its own slice.
struct MessageSpan {
  double leaves_ns = 0;
  double lands_ns = 0;
};
MessageSpan message_span(const Timeline& timeline, const MessageLink& link);

/// One compute event of a timed trace, where the cost model put it.
struct ComputeSlice {
  std::string name;  ///< "forward L3 m2 c0": the label, then layer, micro-batch and chunk
  const ComputeItem* item = nullptr;
  bool after = false;  ///< done after the operation (a rank's last), not before it
};

/// The event's compute events that carry virtual times (none on a logical axis: a trace
/// without them has no durations for compute).
std::vector<ComputeSlice> timed_compute(const TraceEvent& event);

/// Whether any event of the rank has a timed compute event.
bool has_timed_compute(const std::vector<TraceEvent>& events);

}  // namespace ranklab
