// The late-arrival check of late_arrivals.hpp: collectives gathered per (group, index), their
// members' post and completion times compared.
#include "traces/late_arrivals.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>

#include "traces/timeline.hpp"

namespace ranklab {
namespace {

struct Member {
  int rank = 0;
  std::int64_t post = kNoTime;
  std::int64_t end = kNoTime;
};

}  // namespace

ArrivalCheck check_arrivals(const Trace& trace, bool one_clock) {
  ArrivalCheck check;
  check.one_clock = one_clock;
  check.timed = has_virtual_time(trace);
  if (!check.timed) return check;
  std::map<std::pair<std::uint32_t, std::int64_t>, std::vector<Member>> collectives;
  std::map<std::pair<std::uint32_t, std::int64_t>, OpKind> kinds;
  for (const auto& events : trace.ranks) {
    for (const TraceEvent& e : events) {
      if (e.coll_seq == kNoCollective) continue;
      collectives[{e.group, e.coll_seq}].push_back({e.rank, e.vt_post_ns, e.vt_end_ns});
      kinds.emplace(std::pair{e.group, e.coll_seq}, e.op);
    }
  }
  std::vector<LateArrival> late;
  for (const auto& [key, members] : collectives) {
    if (key.first >= trace.header.groups.size() ||
        members.size() != trace.header.groups[key.first].ranks.size() || members.size() < 2) {
      continue;  // someone never entered it: a missing rank, which replay reports
    }
    ++check.compared;
    const bool all_ended = std::all_of(members.begin(), members.end(),
                                       [](const Member& m) { return m.end != kNoTime; });
    if (all_ended) {
      ++check.completed_everywhere;
      const auto [lo, hi] = std::minmax_element(members.begin(), members.end(),
                                                [](const Member& a, const Member& b) { return a.end < b.end; });
      check.clock_spread_ns = std::max(check.clock_spread_ns, hi->end - lo->end);
    }
    const auto last = std::max_element(members.begin(), members.end(),
                                       [](const Member& a, const Member& b) { return a.post < b.post; });
    std::int64_t others = std::numeric_limits<std::int64_t>::min();
    for (const Member& m : members) {
      if (&m != &*last) others = std::max(others, m.post);
    }
    late.push_back({last->rank, key.first, key.second, kinds.at(key), last->post - others});
  }
  if (!one_clock && check.clock_spread_ns < 0) return check;  // nothing bounds the clocks
  check.threshold_ns = std::max(kLateArrivalFloorNs, one_clock ? 0 : check.clock_spread_ns);
  std::erase_if(late, [&](const LateArrival& a) { return a.late_by_ns <= check.threshold_ns; });
  std::stable_sort(late.begin(), late.end(), [](const LateArrival& a, const LateArrival& b) {
    return a.late_by_ns > b.late_by_ns;
  });
  if (late.size() > kMaxLateArrivals) late.resize(kMaxLateArrivals);
  check.late = std::move(late);
  return check;
}

std::string format_duration_ns(std::int64_t ns) {
  const double v = static_cast<double>(ns);
  if (ns >= 1'000'000'000) return fmt::format("{:.3g} s", v / 1e9);
  if (ns >= 1'000'000) return fmt::format("{:.3g} ms", v / 1e6);
  if (ns >= 1'000) return fmt::format("{:.3g} us", v / 1e3);
  return fmt::format("{} ns", ns);
}

std::vector<std::string> describe_arrivals(const ArrivalCheck& check, const TraceHeader& header) {
  std::vector<std::string> lines;
  if (!check.timed) return lines;
  const std::string clocks =
      check.one_clock
          ? std::string("one clock")
          : fmt::format("host clocks agree to within {} on the {} collectives every rank completed",
                        format_duration_ns(std::max<std::int64_t>(check.clock_spread_ns, 0)),
                        check.completed_everywhere);
  if (!check.one_clock && check.clock_spread_ns < 0) {
    lines.push_back(fmt::format(
        "  no collective completed on every rank, so the hosts' clocks cannot be compared: "
        "no late arrival is claimed ({} collectives entered by every member)",
        check.compared));
    return lines;
  }
  for (const LateArrival& a : check.late) {
    const std::string group = a.group < header.groups.size() ? header.groups[a.group].name : "?";
    lines.push_back(fmt::format("  rank {} entered {} #{} of {} {} after the others ({})", a.rank,
                                to_string(a.op), a.coll_seq, group, format_duration_ns(a.late_by_ns),
                                clocks));
  }
  if (check.late.empty()) {
    lines.push_back(fmt::format("  no rank entered a collective more than {} after the others "
                                "({} collectives compared; {})",
                                format_duration_ns(check.threshold_ns), check.compared, clocks));
  }
  return lines;
}

}  // namespace ranklab
