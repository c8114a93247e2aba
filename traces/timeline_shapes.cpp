#include "traces/timeline_shapes.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace ranklab {
namespace {

/// A point inside [start, start + duration] near `at` (see MessageSpan).
double inside(const Placement& slice, double at) {
  const double inset = std::min(slice.duration_ns / 4, 1.0);
  return std::clamp(at, slice.start_ns + inset, slice.start_ns + slice.duration_ns - inset);
}

std::string compute_name(const ComputeItem& item) {
  std::string name = item.label.empty() ? "compute" : item.label;
  if (item.layer >= 0) name += fmt::format(" L{}", item.layer);
  if (item.microbatch >= 0) name += fmt::format(" m{}", item.microbatch);
  if (item.chunk >= 0) name += fmt::format(" c{}", item.chunk);
  return name;
}

bool timed(const ComputeItem& item) {
  return item.vt_start_ns != kNoTime && item.vt_end_ns != kNoTime;
}

}  // namespace

MessageSpan message_span(const Timeline& timeline, const MessageLink& link) {
  const Placement& send = timeline.at(link.send);
  const Placement& recv = timeline.at(link.recv);
  const double leaves = inside(send, std::max(send.start_ns, recv.start_ns));
  return {.leaves_ns = leaves,
          .lands_ns = std::max(leaves, inside(recv, recv.start_ns + recv.duration_ns))};
}

std::vector<ComputeSlice> timed_compute(const TraceEvent& event) {
  std::vector<ComputeSlice> out;
  for (const ComputeWork* work : {&event.compute, &event.compute_after}) {
    for (const ComputeItem& item : work->items) {
      if (timed(item)) out.push_back({compute_name(item), &item, work == &event.compute_after});
    }
  }
  return out;
}

bool has_timed_compute(const std::vector<TraceEvent>& events) {
  return std::any_of(events.begin(), events.end(),
                     [](const TraceEvent& e) { return !timed_compute(e).empty(); });
}

}  // namespace ranklab
