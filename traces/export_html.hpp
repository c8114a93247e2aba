// `ranklab export --html`: a self-contained HTML report of a trace (no network, no files
// beside it): a timeline with a row per rank (per group of ranks beyond 64), a time axis in
// ns, us, ms or s, and an arrow per message; the rank x rank communication matrix as a
// heatmap; traffic per group kind. The page is traces/report/report.html with the trace's
// data embedded as JSON.
#pragma once

#include <cstddef>
#include <filesystem>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>

#include "traces/event.hpp"

namespace ranklab {

struct HtmlReportOptions {
  std::string title = "ranklab trace";
  /// Operations drawn on the timeline. A browser handles some tens of thousands of SVG
  /// shapes; beyond the limit the report keeps the earliest and says so. 0: no limit.
  std::size_t max_events = 20'000;
};

/// What the page draws, as JSON: title, world_size, time axis (time_base, time_unit,
/// start, end in µs), events_total, events_shown, ranks (per rank, in time order:
/// [start, duration, op, pending, label, description]), flows ([send rank, slot, recv rank,
/// slot] into `ranks`), layout (the timeline's rows and axis ticks: traces/report_layout.hpp),
/// stats (stats_to_json) and the header's config.
nlohmann::json html_report_data(const Trace& trace, const HtmlReportOptions& options);

/// Writes the page.
void write_html_report(std::ostream& out, const Trace& trace, const HtmlReportOptions& options);

/// Writes the page to `path`; throws TraceError naming the path if it cannot.
void write_html_report_file(const std::filesystem::path& path, const Trace& trace,
                            const HtmlReportOptions& options);

}  // namespace ranklab
