#include "cli/timing_matches.hpp"

#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ranklab::cli {

std::vector<std::string> timing_decided_matches(const Trace& trace) {
  std::vector<std::string> out;
  for (const std::vector<TraceEvent>& events : trace.ranks) {
    // (group, tag) -> the ops and the senders they took, in op order.
    std::map<std::pair<std::uint32_t, int>, std::pair<std::vector<std::uint64_t>, std::vector<int>>>
        taken;
    for (const TraceEvent& e : events) {
      if (e.op != OpKind::recv || !e.any_source || e.status != OpStatus::completed) continue;
      auto& [ops, senders] = taken[{e.group, e.tag}];
      ops.push_back(e.rank_seq);
      senders.push_back(e.peer);
    }
    for (const auto& [key, matched] : taken) {
      const auto& [ops, senders] = matched;
      if (std::set<int>(senders.begin(), senders.end()).size() < 2) continue;
      std::vector<std::string> numbers;
      for (const std::uint64_t op : ops) numbers.push_back(fmt::format("#{}", op));
      out.push_back(fmt::format(
          "rank {}'s receives from any source (tag {} in {}: ops {}) took ranks {} in that order",
          events.front().rank, key.second, trace.header.groups[key.first].name,
          fmt::join(numbers, ", "), fmt::join(senders, ", ")));
    }
  }
  return out;
}

std::vector<std::string> timing_report(const Trace& trace, int threads,
                                       const std::string& trace_path) {
  if (threads < 2) return {};
  std::vector<std::string> out;
  for (const std::string& line : timing_decided_matches(trace)) {
    out.push_back(fmt::format("matched by timing (--threads {}): {}", threads, line));
  }
  if (out.empty()) return out;
  out.push_back(trace_path.empty()
                    ? "each outcome on one thread: record the run with --trace FILE, then "
                      "`ranklab replay FILE --threads 1` (each receive takes the sender it took)"
                    : fmt::format("this outcome on one thread: ranklab replay {} --threads 1 "
                                  "(each receive takes the sender it took)",
                                  trace_path));
  return out;
}

}  // namespace ranklab::cli
