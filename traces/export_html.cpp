#include "traces/export_html.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <ostream>
#include <set>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "traces/event_text.hpp"
#include "traces/messages.hpp"
#include "traces/output_file.hpp"
#include "traces/report_layout.hpp"
#include "traces/report/report_template.hpp"
#include "traces/stats.hpp"
#include "traces/timeline.hpp"
#include "traces/timeline_shapes.hpp"

namespace ranklab {
namespace {

using nlohmann::json;

constexpr std::int64_t kHidden = -1;
using Slots = std::vector<std::vector<std::int64_t>>;

/// Per rank and event, its slot in the page's row (kHidden: not drawn). Over the limit,
/// the earliest events win, so the page shows a complete prefix of the run.
Slots assign_slots(const Trace& trace, const Timeline& timeline, std::size_t limit) {
  const std::vector<std::vector<bool>> shown = earliest_events(trace, timeline, limit);
  Slots slots(trace.ranks.size());
  // Number the drawn events of each rank in time order: the page's slot indices.
  for (std::size_t rank = 0; rank < slots.size(); ++rank) {
    slots[rank].assign(trace.ranks[rank].size(), kHidden);
    std::int64_t next = 0;
    for (std::size_t index : timeline.order(static_cast<int>(rank))) {
      if (shown[rank][index]) slots[rank][index] = next++;
    }
  }
  return slots;
}

struct Extent {
  double start = std::numeric_limits<double>::infinity();
  double end = 0;

  void add(double from_ns, double to_ns) {
    start = std::min(start, from_ns / 1000.0);
    end = std::max(end, to_ns / 1000.0);
  }
};

/// Strings many slices share (group kinds, call sites), sent once and named by index.
class StringTable {
 public:
  std::int64_t index(const std::string& text) {
    const auto [it, added] = indices_.try_emplace(text, static_cast<std::int64_t>(list_.size()));
    if (added) list_.push_back(text);
    return it->second;
  }
  json to_json() const { return list_; }

 private:
  std::map<std::string, std::int64_t> indices_;
  std::vector<std::string> list_;
};

/// The verdict's blocked operations that are in the trace.
std::vector<EventRef> blocked_events(const Trace& trace, const std::optional<HtmlVerdict>& verdict) {
  std::vector<EventRef> out;
  if (!verdict) return out;
  for (const auto& [rank, seq] : verdict->blocked) {
    if (rank < 0 || static_cast<std::size_t>(rank) >= trace.ranks.size()) continue;
    const auto& events = trace.ranks[static_cast<std::size_t>(rank)];
    const std::size_t index = event_index(events, seq);
    if (index < events.size()) out.push_back({rank, index});
  }
  return out;
}

/// What the page marks on each slice: the verdict's blocked operations, sends whose message
/// no receive took (completed, so the sender went on: the message was lost), other pending
/// operations.
class SliceStates {
 public:
  SliceStates(const Trace& trace, const MessageLinks& links,
              const std::optional<HtmlVerdict>& verdict) {
    for (const MessageLink& link : links.links) received_.emplace(link.send.rank, link.send.index);
    for (const EventRef ref : blocked_events(trace, verdict)) blocked_.emplace(ref.rank, ref.index);
  }

  /// "done", "pending", "blocked", "lost", or "blocked lost": a send the recording
  /// completed (buffered) and no receive took, which the replay blocks in.
  std::string of(const TraceEvent& event, int rank, std::size_t index) const {
    const bool lost = event.op == OpKind::send && event.status == OpStatus::completed &&
                      !received_.contains({rank, index});
    if (blocked_.contains({rank, index})) return lost ? "blocked lost" : "blocked";
    if (lost) return "lost";
    return event.status == OpStatus::completed ? "done" : "pending";
  }

 private:
  std::set<std::pair<int, std::size_t>> received_;
  std::set<std::pair<int, std::size_t>> blocked_;
};

struct RowTables {
  StringTable kinds;
  StringTable sites;
};

json rank_rows(const Trace& trace, const Timeline& timeline, const Slots& slots,
               const SliceStates& states, RowTables& tables, Extent& extent) {
  json ranks = json::array();
  for (std::size_t rank = 0; rank < trace.ranks.size(); ++rank) {
    const int r = static_cast<int>(rank);
    json row = json::array();
    for (std::size_t index : timeline.order(r)) {
      if (slots[rank][index] == kHidden) continue;
      const TraceEvent& event = trace.ranks[rank][index];
      const Placement& at = timeline.at({r, index});
      extent.add(at.start_ns, at.start_ns + at.duration_ns);
      const std::string site = describe_site(event.site);
      row.push_back({at.start_ns / 1000.0, at.duration_ns / 1000.0, to_string(event.op),
                     states.of(event, r, index), event_label(event, trace.header),
                     describe_event(event, trace.header),
                     tables.kinds.index(std::string(group_kind(group_name(trace.header, event)))),
                     site.empty() ? kHidden : tables.sites.index(site)});
    }
    ranks.push_back(std::move(row));
  }
  return ranks;
}

/// Compute slices of the drawn events, on a timed trace only (a logical axis has no
/// durations for compute).
json compute_rows(const Trace& trace, const Timeline& timeline, const Slots& slots,
                  Extent& extent) {
  json rows = json::array();
  const bool timed = timeline.base() == TimeBase::virtual_time;
  for (std::size_t rank = 0; rank < trace.ranks.size(); ++rank) {
    json row = json::array();
    for (std::size_t index = 0; timed && index < trace.ranks[rank].size(); ++index) {
      if (slots[rank][index] == kHidden) continue;
      for (const ComputeSlice& slice : timed_compute(trace.ranks[rank][index])) {
        const auto start = static_cast<double>(slice.item->vt_start_ns);
        const auto end = static_cast<double>(slice.item->vt_end_ns);
        extent.add(start, end);
        row.push_back({start / 1000.0, (end - start) / 1000.0, slice.name});
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

json flow_pairs(const Timeline& timeline, const MessageLinks& links, const Slots& slots) {
  json flows = json::array();
  const auto slot = [&slots](EventRef ref) {
    return slots[static_cast<std::size_t>(ref.rank)][ref.index];
  };
  for (const MessageLink& link : links.links) {
    if (slot(link.send) == kHidden || slot(link.recv) == kHidden) continue;
    const MessageSpan span = message_span(timeline, link);
    flows.push_back({link.send.rank, slot(link.send), link.recv.rank, slot(link.recv),
                     span.leaves_ns / 1000.0, span.lands_ns / 1000.0});
  }
  return flows;
}

json verdict_json(const Trace& trace, const std::optional<HtmlVerdict>& verdict,
                  const Slots& slots) {
  if (!verdict) return {{"status", ""}, {"note", "not diagnosed"}};
  json blocked = json::array();
  for (const EventRef ref : blocked_events(trace, verdict)) {
    const std::int64_t slot = slots[static_cast<std::size_t>(ref.rank)][ref.index];
    if (slot != kHidden) blocked.push_back({ref.rank, slot});
  }
  return {{"status", verdict->status},         {"summary", verdict->summary},
          {"headline", verdict->headline},     {"culprit_kind", verdict->culprit_kind},
          {"culprit", verdict->culprit},       {"blocked", std::move(blocked)},
          {"cycles", verdict->cycles},         {"note", verdict->note}};
}

/// JSON that is safe inside <script>: '<' only occurs in strings, where \u003c is the same
/// character, and without it a group name could close the script element.
std::string script_safe(const json& data) {
  const std::string text = data.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

json html_report_data(const Trace& trace, const HtmlReportOptions& options) {
  const Timeline timeline(trace);
  const Slots slots = assign_slots(trace, timeline, options.max_events);
  const MessageLinks links = link_messages(trace);
  Extent extent;
  RowTables tables;
  json ranks =
      rank_rows(trace, timeline, slots, SliceStates(trace, links, options.verdict), tables, extent);
  json compute = compute_rows(trace, timeline, slots, extent);
  std::size_t total = 0;
  std::size_t shown = 0;
  for (std::size_t rank = 0; rank < trace.ranks.size(); ++rank) {
    total += trace.ranks[rank].size();
    shown += ranks[rank].size();
  }
  if (shown == 0) extent.start = 0;
  const TimelineLayout layout = timeline_layout(static_cast<int>(trace.ranks.size()),
                                                timeline.base(), extent.start, extent.end);
  return {{"title", options.title},
          {"world_size", trace.header.world_size},
          {"time_base", to_string(timeline.base())},
          {"time_unit", axis_unit(timeline.base())},
          {"start", extent.start},
          {"end", extent.end},
          {"events_total", total},
          {"events_shown", shown},
          {"verdict", verdict_json(trace, options.verdict, slots)},
          {"ranks", std::move(ranks)},
          {"kinds", tables.kinds.to_json()},
          {"sites", tables.sites.to_json()},
          {"compute", std::move(compute)},
          {"layout", to_json(layout)},
          {"flows", flow_pairs(timeline, links, slots)},
          {"stats", stats_to_json(compute_stats(trace))},
          {"config", trace.header.config}};
}

void write_html_report(std::ostream& out, const Trace& trace, const HtmlReportOptions& options) {
  const std::string_view page = detail::html_report_template();
  const std::size_t marker = page.find(detail::kReportDataMarker);
  if (marker == std::string_view::npos) {
    throw std::logic_error("the embedded HTML report page has no data marker");
  }
  out << page.substr(0, marker) << script_safe(html_report_data(trace, options))
      << page.substr(marker + detail::kReportDataMarker.size());
}

void write_html_report_file(const std::filesystem::path& path, const Trace& trace,
                            const HtmlReportOptions& options) {
  write_output_file(path, "HTML report",
                    [&](std::ostream& out) { write_html_report(out, trace, options); });
}

}  // namespace ranklab
