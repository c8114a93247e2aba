// The HTML report's timeline layout (issue 14 §3), decided here rather than in the page's
// script so that tests check it without a browser: which ranks share a row and where rows
// and their labels sit, and the time axis's ticks, labelled in the unit its span reads in
// (ns, us, ms or s; Lamport ticks for a logical axis), spaced so that no two labels touch.
//
// Up to max_rows ranks, a row per rank ("rank 5"). Beyond, consecutive ranks share a row,
// a power of two of them so that 512 ranks read as 64 rows of 8 ("ranks 8-15"); the page
// overlays a row's ranks' operations and names each one's rank on hover.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "traces/timeline.hpp"

namespace ranklab {

/// One timeline row: ranks first..last (inclusive), its label and its top edge.
struct ReportRow {
  std::string label;  ///< "rank 3", or "ranks 8-15"
  int first_rank = 0;
  int last_rank = 0;
  double y = 0;  ///< px
};

/// One tick of the time axis.
struct AxisTick {
  double at = 0;       ///< on the report's axis: µs (virtual time), or Lamport ticks
  std::string label;   ///< with its unit: "250 us", "1.5 ms", "40 ticks"
  double x = 0;        ///< px of the tick (its label starts 2 px right of it), at zoom 1
  double width = 0;    ///< the label's estimated width, px
};

struct TimelineLayout {
  double gutter = 0;      ///< px left of the plot: the widest row label and a margin
  double plot_width = 0;  ///< px at zoom 1
  double top = 0;         ///< px above the first row, where the tick labels go
  double row_height = 0;  ///< px
  int ranks_per_row = 1;
  std::vector<ReportRow> rows;
  std::string unit;  ///< of the tick labels: "ns", "us", "ms", "s" or "ticks"
  std::vector<AxisTick> ticks;
  double right_margin = 0;  ///< px right of the plot, room for the last tick's label
};

struct LayoutOptions {
  std::size_t max_rows = 64;  ///< beyond, ranks share rows
  double plot_width = 1100;   ///< px at zoom 1
};

/// The layout of `world` ranks over [start, end] (the report's axis, µs or ticks).
TimelineLayout timeline_layout(int world, TimeBase base, double start, double end,
                               const LayoutOptions& options = {});

/// Estimated width in px of `text` in the page's 11 px sans-serif labels: 7 px a character,
/// more than any digit or lower-case letter takes (the page's own check measures them).
double label_width(std::string_view text);

/// What the page reads: {gutter, plot_width, top, row_height, ranks_per_row, unit,
/// right_margin, rows: [{label, first, last, y}], ticks: [{at, label, x, width}]}.
nlohmann::json to_json(const TimelineLayout& layout);

}  // namespace ranklab
