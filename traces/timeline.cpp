#include "traces/timeline.hpp"

#include <tuple>

#include <algorithm>
#include <numeric>

#include "traces/enum_names.hpp"

namespace ranklab {
namespace {

constexpr EnumNames<TimeBase, 2> kTimeBaseNames({"lamport", "virtual"});
constexpr EnumNames<TimeBase, 2> kAxisUnits({"1 Lamport tick = 1 us",
                                             "virtual time (a cost model's, or the recording's clocks)"});

Placement lamport_placement(const TraceEvent& event) {
  // double, not an integer product: a hand-made trace may hold clocks near 2^64.
  return {static_cast<double>(event.lamport) * kLamportTickNs, kLamportTickNs};
}

}  // namespace

bool has_virtual_time(const Trace& trace) {
  bool any = false;
  for (const auto& events : trace.ranks) {
    for (const TraceEvent& event : events) {
      if (event.vt_post_ns == kNoTime) return false;
      any = true;
    }
  }
  return any;
}

std::string_view to_string(TimeBase base) { return kTimeBaseNames[base]; }

std::string_view axis_unit(TimeBase base) { return kAxisUnits[base]; }

Timeline::Timeline(const Trace& trace) {
  placements_.resize(trace.ranks.size());
  order_.resize(trace.ranks.size());
  if (has_virtual_time(trace)) base_ = TimeBase::virtual_time;
  // Pending operations of a virtual timeline reach the end of the last completed one.
  double virtual_end = 0;
  for (const auto& events : trace.ranks) {
    for (const TraceEvent& event : events) {
      virtual_end =
          std::max(virtual_end, static_cast<double>(std::max(event.vt_post_ns, event.vt_end_ns)));
    }
  }
  for (std::size_t rank = 0; rank < trace.ranks.size(); ++rank) {
    const auto& events = trace.ranks[rank];
    auto& placed = placements_[rank];
    placed.reserve(events.size());
    for (const TraceEvent& event : events) {
      if (base_ == TimeBase::virtual_time) {
        const auto post = static_cast<double>(event.vt_post_ns);
        const double end =
            event.vt_end_ns == kNoTime ? virtual_end : static_cast<double>(event.vt_end_ns);
        placed.push_back({post, std::max(0.0, end - post)});
      } else {
        placed.push_back(lamport_placement(event));
      }
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

std::vector<std::vector<bool>> earliest_events(const Trace& trace, const Timeline& timeline,
                                               std::size_t limit) {
  struct Candidate {
    double start;
    int rank;
    std::size_t index;
  };
  std::size_t total = 0;
  for (const auto& events : trace.ranks) total += events.size();
  std::vector<std::vector<bool>> shown(trace.ranks.size());
  const bool limited = limit != 0 && total > limit;
  for (std::size_t rank = 0; rank < trace.ranks.size(); ++rank) {
    shown[rank].assign(trace.ranks[rank].size(), !limited);
  }
  if (!limited) return shown;
  std::vector<Candidate> candidates;
  candidates.reserve(total);
  for (std::size_t rank = 0; rank < trace.ranks.size(); ++rank) {
    for (std::size_t index = 0; index < trace.ranks[rank].size(); ++index) {
      const int r = static_cast<int>(rank);
      candidates.push_back({timeline.at({r, index}).start_ns, r, index});
    }
  }
  const auto earlier = [](const Candidate& a, const Candidate& b) {
    return std::tie(a.start, a.rank, a.index) < std::tie(b.start, b.rank, b.index);
  };
  std::nth_element(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(limit),
                   candidates.end(), earlier);
  for (std::size_t i = 0; i < limit; ++i) {
    shown[static_cast<std::size_t>(candidates[i].rank)][candidates[i].index] = true;
  }
  return shown;
}

}  // namespace ranklab
