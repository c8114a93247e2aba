#include "traces/stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <unordered_map>
#include <vector>

#include "traces/event_text.hpp"
#include "traces/messages.hpp"

namespace ranklab {
namespace {

using nlohmann::json;

// The staging copies an event carries (format 1.3), whatever its status: a copy to the
// host happened before the operation was posted.
void count_staging(TraceStats& stats, const ComputeWork& work) {
  for (const ComputeItem& item : work.items) {
    if (item.copy == StagingCopy::to_host) stats.staged_to_host.add(item.bytes);
    if (item.copy == StagingCopy::to_device) stats.staged_to_device.add(item.bytes);
  }
}

/// What the events add up to before they are filed under names: by operation kind, by
/// group (an index), by sender and receiver, so that counting an event looks nothing up by
/// name (a million-event trace: issue 17 §3).
struct EventTotals {
  std::array<Traffic, static_cast<std::size_t>(OpKind::all_to_all) + 1> operations{};
  std::vector<GroupKindTraffic> groups;  ///< p2p and collectives only; per header group
  std::unordered_map<std::uint64_t, Traffic> matrix;  ///< key: sender << 32 | receiver
};

void count_event(TraceStats& stats, EventTotals& totals, const TraceEvent& event,
                 const TraceHeader& header) {
  ++stats.events;
  count_staging(stats, event.compute);
  count_staging(stats, event.compute_after);
  if (event.status != OpStatus::completed) {
    ++stats.pending;
    return;
  }
  ++stats.completed;
  totals.operations[static_cast<std::size_t>(event.op)].add(event.bytes);
  if (event.group >= totals.groups.size()) group_name(header, event);  // throws, naming it
  GroupKindTraffic& group = totals.groups[event.group];
  if (event.op == OpKind::send) {
    group.p2p.add(event.bytes);
    const auto pair = static_cast<std::uint64_t>(static_cast<std::uint32_t>(event.rank)) << 32 |
                      static_cast<std::uint32_t>(event.peer);
    totals.matrix[pair].add(event.bytes);
  } else if (!is_point_to_point(event.op)) {
    group.collectives.add(event.bytes);
  }
}

/// Files the totals under their names, as TraceStats reports them.
void file_totals(TraceStats& stats, const EventTotals& totals, const TraceHeader& header) {
  for (std::size_t op = 0; op < totals.operations.size(); ++op) {
    if (totals.operations[op].count == 0) continue;
    stats.operations[std::string(to_string(static_cast<OpKind>(op)))] += totals.operations[op];
  }
  for (std::size_t g = 0; g < totals.groups.size(); ++g) {
    GroupKindTraffic& kind = stats.group_kinds[std::string(group_kind(header.groups[g].name))];
    kind.p2p += totals.groups[g].p2p;
    kind.collectives += totals.groups[g].collectives;
  }
  for (const auto& [pair, traffic] : totals.matrix) {
    stats.matrix[{static_cast<int>(pair >> 32), static_cast<int>(pair & 0xffffffffU)}] += traffic;
  }
}

/// One row of a text table: a name column, then right-aligned numbers (or headings).
template <typename Cell>
void append_table_row(std::string& out, std::string_view name, const std::vector<Cell>& cells) {
  fmt::format_to(std::back_inserter(out), "  {:<16}", name);
  for (const Cell& cell : cells) fmt::format_to(std::back_inserter(out), " {:>14}", cell);
  out += '\n';
}

void append_dense_matrix(std::string& out, const TraceStats& stats) {
  auto it = std::back_inserter(out);
  fmt::format_to(it, "\np2p bytes, sender (row) -> receiver (column):\n  {:>6}", "");
  for (int dst = 0; dst < stats.world_size; ++dst) fmt::format_to(it, " {:>10}", dst);
  out += '\n';
  for (int src = 0; src < stats.world_size; ++src) {
    fmt::format_to(it, "  {:>6}", src);
    for (int dst = 0; dst < stats.world_size; ++dst) {
      const auto cell = stats.matrix.find({src, dst});
      if (cell == stats.matrix.end()) {
        fmt::format_to(it, " {:>10}", ".");
      } else {
        fmt::format_to(it, " {:>10}", cell->second.bytes);
      }
    }
    out += '\n';
  }
}

/// Large worlds: the pairs that moved the most bytes, so the text stays readable.
void append_busiest_pairs(std::string& out, const TraceStats& stats) {
  std::vector<std::pair<std::pair<int, int>, Traffic>> pairs(stats.matrix.begin(),
                                                             stats.matrix.end());
  std::stable_sort(pairs.begin(), pairs.end(),
                   [](const auto& a, const auto& b) { return a.second.bytes > b.second.bytes; });
  auto it = std::back_inserter(out);
  fmt::format_to(it, "\np2p traffic, busiest sender -> receiver pairs ({} pairs talked):\n",
                 pairs.size());
  for (std::size_t i = 0; i < pairs.size() && i < kListedPairs; ++i) {
    fmt::format_to(it, "  {:>7} -> {:<7} {:>10} messages {:>14} bytes\n", pairs[i].first.first,
                   pairs[i].first.second, pairs[i].second.count, pairs[i].second.bytes);
  }
  if (pairs.size() > kListedPairs) {
    fmt::format_to(it, "  ... {} more pairs (all of them: --json)\n", pairs.size() - kListedPairs);
  }
}

json traffic_json(const Traffic& traffic) {
  return {{"count", traffic.count}, {"bytes", traffic.bytes}};
}

}  // namespace

std::string_view group_kind(std::string_view group_name) {
  return group_name.substr(0, group_name.find('['));
}

TraceStats compute_stats(const Trace& trace) {
  TraceStats stats;
  stats.world_size = trace.header.world_size;
  for (const TraceGroup& group : trace.header.groups) {
    ++stats.group_kinds[std::string(group_kind(group.name))].groups;
  }
  EventTotals totals;
  totals.groups.resize(trace.header.groups.size());
  for (const auto& events : trace.ranks) {
    for (const TraceEvent& event : events) count_event(stats, totals, event, trace.header);
  }
  file_totals(stats, totals, trace.header);
  stats.dangling_receives = link_messages(trace).dangling_receives;
  return stats;
}

std::string format_stats(const TraceStats& stats, std::string_view trace_name) {
  std::string out =
      fmt::format("trace {}: world {}, {} operations ({} completed, {} pending)\n", trace_name,
                  stats.world_size, stats.events, stats.completed, stats.pending);
  if (stats.dangling_receives > 0) {
    out += fmt::format("warning: {} receives name a send that is not in the trace\n",
                       stats.dangling_receives);
  }
  out += '\n';
  append_table_row<std::string_view>(
      out, "group kind", {"groups", "p2p messages", "p2p bytes", "coll calls", "coll bytes"});
  for (const auto& [kind, traffic] : stats.group_kinds) {
    append_table_row<std::uint64_t>(out, kind,
                                    {traffic.groups, traffic.p2p.count, traffic.p2p.bytes,
                                     traffic.collectives.count, traffic.collectives.bytes});
  }
  out += '\n';
  append_table_row<std::string_view>(out, "operation", {"calls", "bytes"});
  for (const auto& [op, traffic] : stats.operations) {
    append_table_row<std::uint64_t>(out, op, {traffic.count, traffic.bytes});
  }
  if (stats.staged_to_host.count + stats.staged_to_device.count > 0) {
    out += fmt::format(
        "\nstaging: {} copies device->host ({} B), {} copies host->device ({} B)\n",
        stats.staged_to_host.count, stats.staged_to_host.bytes, stats.staged_to_device.count,
        stats.staged_to_device.bytes);
  }
  if (stats.matrix.empty()) {
    out += "\nno point-to-point messages\n";
  } else if (stats.world_size <= kDenseMatrixRanks) {
    append_dense_matrix(out, stats);
  } else {
    append_busiest_pairs(out, stats);
  }
  out +=
      "\n(a message counts once, at its send; a collective once per member, with that "
      "member's bytes, by group kind only)\n";
  return out;
}

json stats_to_json(const TraceStats& stats) {
  json kinds = json::array();
  for (const auto& [kind, traffic] : stats.group_kinds) {
    kinds.push_back({{"kind", kind},
                     {"groups", traffic.groups},
                     {"p2p", traffic_json(traffic.p2p)},
                     {"collectives", traffic_json(traffic.collectives)}});
  }
  json operations = json::array();
  for (const auto& [op, traffic] : stats.operations) {
    operations.push_back({{"op", op}, {"calls", traffic.count}, {"bytes", traffic.bytes}});
  }
  json matrix = json::array();
  for (const auto& [pair, traffic] : stats.matrix) {
    matrix.push_back({{"src", pair.first},
                      {"dst", pair.second},
                      {"messages", traffic.count},
                      {"bytes", traffic.bytes}});
  }
  return {{"world_size", stats.world_size},
          {"events", stats.events},
          {"completed", stats.completed},
          {"pending", stats.pending},
          {"dangling_receives", stats.dangling_receives},
          {"group_kinds", std::move(kinds)},
          {"operations", std::move(operations)},
          {"staging",
           {{"d2h", {{"copies", stats.staged_to_host.count}, {"bytes", stats.staged_to_host.bytes}}},
            {"h2d",
             {{"copies", stats.staged_to_device.count}, {"bytes", stats.staged_to_device.bytes}}}}},
          {"matrix", std::move(matrix)}};
}

}  // namespace ranklab
