#include "traces/export_html.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <ostream>
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

namespace ranklab {
namespace {

using nlohmann::json;

constexpr std::int64_t kHidden = -1;

/// Per rank and event, its slot in the page's row (kHidden: not drawn). Over the limit,
/// the earliest events win, so the page shows a complete prefix of the run.
std::vector<std::vector<std::int64_t>> assign_slots(const Trace& trace, const Timeline& timeline,
                                                    std::size_t limit) {
  const std::vector<std::vector<bool>> shown = earliest_events(trace, timeline, limit);
  std::vector<std::vector<std::int64_t>> slots(trace.ranks.size());
  for (std::size_t rank = 0; rank < trace.ranks.size(); ++rank) {
    slots[rank].resize(trace.ranks[rank].size());
    for (std::size_t index = 0; index < slots[rank].size(); ++index) {
      slots[rank][index] = shown[rank][index] ? 0 : kHidden;
    }
  }
  // Number the drawn events of each rank in time order: the page's slot indices.
  for (std::size_t rank = 0; rank < slots.size(); ++rank) {
    std::int64_t next = 0;
    for (std::size_t index : timeline.order(static_cast<int>(rank))) {
      if (slots[rank][index] != kHidden) slots[rank][index] = next++;
    }
  }
  return slots;
}

struct Extent {
  double start = std::numeric_limits<double>::infinity();
  double end = 0;
};

json rank_rows(const Trace& trace, const Timeline& timeline,
               const std::vector<std::vector<std::int64_t>>& slots, Extent& extent) {
  json ranks = json::array();
  for (std::size_t rank = 0; rank < trace.ranks.size(); ++rank) {
    json row = json::array();
    for (std::size_t index : timeline.order(static_cast<int>(rank))) {
      if (slots[rank][index] == kHidden) continue;
      const TraceEvent& event = trace.ranks[rank][index];
      const Placement& at = timeline.at({static_cast<int>(rank), index});
      extent.start = std::min(extent.start, at.start_ns / 1000.0);
      extent.end = std::max(extent.end, (at.start_ns + at.duration_ns) / 1000.0);
      row.push_back({at.start_ns / 1000.0, at.duration_ns / 1000.0, to_string(event.op),
                     event.status != OpStatus::completed ? 1 : 0, event_label(event, trace.header),
                     describe_event(event, trace.header)});
    }
    ranks.push_back(std::move(row));
  }
  return ranks;
}

json flow_pairs(const Trace& trace, const std::vector<std::vector<std::int64_t>>& slots) {
  json flows = json::array();
  const auto slot = [&slots](EventRef ref) {
    return slots[static_cast<std::size_t>(ref.rank)][ref.index];
  };
  for (const MessageLink& link : link_messages(trace).links) {
    if (slot(link.send) == kHidden || slot(link.recv) == kHidden) continue;
    flows.push_back({link.send.rank, slot(link.send), link.recv.rank, slot(link.recv)});
  }
  return flows;
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
  const auto slots = assign_slots(trace, timeline, options.max_events);
  Extent extent;
  json ranks = rank_rows(trace, timeline, slots, extent);
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
          {"ranks", std::move(ranks)},
          {"layout", to_json(layout)},
          {"flows", flow_pairs(trace, slots)},
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
