// `ranklab export --html`: a self-contained HTML report of a trace (no network, no files
// beside it): the verdict first (how the run ended, the culprit line as `ranklab replay`
// prints it), then a timeline with a row per rank (per group of ranks beyond 64), a time
// axis in ns, us, ms or s, an arrow per message from its send to its receive's completion,
// compute slices on a timed trace, collectives coloured by group kind, the blocked
// operations, wait-for cycle and messages no receive took marked; the rank x rank
// communication matrix as a heatmap; traffic per group kind; the run's configuration. The
// page is traces/report/report.html with the trace's data embedded as JSON.
#pragma once

#include <cstddef>
#include <filesystem>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "traces/event.hpp"

namespace ranklab {

/// What a diagnosis of the trace concluded (the CLI replays the trace, as `ranklab replay`
/// does, and fills this in from its report: the trace layer knows no emulator).
struct HtmlVerdict {
  std::string status;        ///< "ok", "deadlock", "mismatch", "rank_failed", "unsafe"
  std::string summary;       ///< the run's one-line summary
  std::string headline;      ///< "DEADLOCK: ..."; empty for ok
  std::string culprit_kind;  ///< "send-cycle", ...; empty for ok
  std::string culprit;       ///< "culprit (KIND): TEXT", as the text report ends
  /// The operations ranks were still in when the run stopped: (rank, rank_seq).
  std::vector<std::pair<int, std::uint64_t>> blocked;
  std::vector<std::vector<int>> cycles;  ///< closed: {0, 1, 0} is 0 -> 1 -> 0
  std::string note;  ///< how it was found, or why there is no verdict (status then empty)
};

struct HtmlReportOptions {
  std::string title = "ranklab trace";
  /// Operations drawn on the timeline. A browser handles some tens of thousands of SVG
  /// shapes; beyond the limit the report keeps the earliest and says so. 0: no limit.
  std::size_t max_events = 20'000;
  /// The verdict shown first on the page; none: the page says it was not diagnosed.
  std::optional<HtmlVerdict> verdict;
};

/// What the page draws, as JSON: title, world_size, time axis (time_base, time_unit,
/// start, end in µs), events_total, events_shown, ranks (per rank, in time order:
/// [start, duration, op, state, label, description, kind, site] with state "done",
/// "pending", "blocked" (the verdict's), "lost" (a completed send no receive took) or
/// "blocked lost" (both: the replay blocks in a send the recording buffered), kind
/// an index into `kinds` (group kinds) and site into `sites` (-1: none)), flows ([send
/// rank, slot, recv rank, slot, leaves, lands]: slots into `ranks`, times in µs as
/// message_span places them), compute (per rank: [start, duration, name], timed traces
/// only), verdict (status, summary, headline, culprit_kind, culprit, blocked [[rank,
/// slot]], cycles, note), layout (the timeline's rows and axis ticks:
/// traces/report_layout.hpp), stats (stats_to_json) and the header's config.
nlohmann::json html_report_data(const Trace& trace, const HtmlReportOptions& options);

/// Writes the page.
void write_html_report(std::ostream& out, const Trace& trace, const HtmlReportOptions& options);

/// Writes the page to `path`; throws TraceError naming the path if it cannot.
void write_html_report_file(const std::filesystem::path& path, const Trace& trace,
                            const HtmlReportOptions& options);

}  // namespace ranklab
