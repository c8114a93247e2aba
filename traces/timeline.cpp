#include "traces/timeline.hpp"

#include <algorithm>
#include <numeric>

namespace ranklab {
namespace {

Placement lamport_placement(const TraceEvent& event) {
  // double, not an integer product: a hand-made trace may hold clocks near 2^64.
  return {static_cast<double>(event.lamport) * kLamportTickNs, kLamportTickNs};
}

}  // namespace

std::string_view to_string(TimeBase base) {
  switch (base) {
    case TimeBase::lamport:
      return "lamport";
  }
  return "unknown";
}

std::string_view axis_unit(TimeBase base) {
  switch (base) {
    case TimeBase::lamport:
      return "1 Lamport tick = 1 us";
  }
  return "unknown";
}

Timeline::Timeline(const Trace& trace) {
  placements_.resize(trace.ranks.size());
  order_.resize(trace.ranks.size());
  for (std::size_t rank = 0; rank < trace.ranks.size(); ++rank) {
    const auto& events = trace.ranks[rank];
    auto& placed = placements_[rank];
    placed.reserve(events.size());
    for (const TraceEvent& event : events) {
      placed.push_back(lamport_placement(event));
      end_ns_ = std::max(end_ns_, placed.back().start_ns + placed.back().duration_ns);
    }
    // Non-blocking operations complete out of issue order (an irecv posted first finishes
    // last), so drawing order is by time, not by rank_seq.
    auto& order = order_[rank];
    order.resize(events.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&placed](std::size_t a, std::size_t b) {
      return placed[a].start_ns < placed[b].start_ns;
    });
  }
}

}  // namespace ranklab
