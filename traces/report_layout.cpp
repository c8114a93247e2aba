#include "traces/report_layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace ranklab {

namespace {

constexpr double kCharPx = 7.0;
constexpr double kLabelGap = 6.0;     // px between one tick label's end and the next's start
constexpr double kLabelOffset = 2.0;  // a tick label starts this far right of its tick
constexpr double kTop = 18.0;         // room above the rows for the tick labels
constexpr double kMinRowPx = 14.0;    // an 11 px label and a pixel above and below
constexpr double kMaxRowPx = 22.0;
constexpr double kRowsPx = 560.0;  // the rows share this height, within the bounds above

// The unit tick labels read in, and how many of the axis's units (µs) make one.
struct Unit {
  const char* name;
  double scale;
};

Unit unit_for(TimeBase base, double span) {
  if (base == TimeBase::lamport) return {"ticks", 1};
  if (span < 10) return {"ns", 1e-3};
  if (span < 1e4) return {"us", 1};
  if (span < 1e7) return {"ms", 1e3};
  return {"s", 1e6};
}

std::string tick_label(double at, double step, const Unit& unit) {
  // Enough decimals to tell ticks one step apart, no more.
  const double step_in_unit = step / unit.scale;
  const int decimals = std::max(0, static_cast<int>(std::ceil(-std::log10(step_in_unit) - 1e-9)));
  const std::string number = fmt::format("{:.{}f}", at / unit.scale, decimals);
  // "1 tick", never "1 ticks" (the other units are symbols: "1 us").
  if (number == "1" && std::string_view(unit.name) == "ticks") return "1 tick";
  return number + " " + unit.name;
}

// Ticks every `step` over [start, end] with their labels, or none if two labels would touch.
std::vector<AxisTick> ticks_every(double step, double start, double end, const Unit& unit,
                                  double gutter, double plot_width) {
  const double span = end - start;
  const double step_px = step / span * plot_width;
  std::vector<AxisTick> out;
  const double first = std::ceil(start / step - 1e-9);
  for (double i = first;; ++i) {
    const double at = i * step + 0.0;  // + 0.0: -0 (ceil of a tiny negative) reads "0"
    if (at > end + step * 1e-9) break;
    AxisTick tick{.at = at, .label = tick_label(at, step, unit)};
    tick.width = label_width(tick.label);
    tick.x = gutter + (at - start) / span * plot_width;
    if (!out.empty() && out.back().width + kLabelGap > step_px) return {};
    out.push_back(std::move(tick));
  }
  return out;
}

std::vector<AxisTick> axis_ticks(TimeBase base, double start, double end, const Unit& unit,
                                 double gutter, double plot_width) {
  const auto one_tick = [&] {
    const std::string label = tick_label(start, unit.scale, unit);
    return std::vector<AxisTick>{{.at = start, .label = label, .x = gutter, .width = label_width(label)}};
  };
  const double span = end - start;
  if (!(span > 0) || !std::isfinite(span)) return one_tick();
  // The finest step of 1, 2 or 5 times a power of ten whose labels do not touch; Lamport
  // ticks are whole, virtual time goes down to 1 ns. A step between span/2.5 and span
  // always fits (one or two ticks, half the plot apart), so the search ends there.
  const double finest = base == TimeBase::lamport ? 1.0 : 1e-3;
  double decade = std::pow(10.0, std::floor(std::log10(std::max(finest, span / 1000))));
  for (int decades = 0; decades < 8; ++decades, decade *= 10) {
    for (const double mantissa : {1.0, 2.0, 5.0}) {
      const double step = mantissa * decade;
      if (step < finest) continue;
      std::vector<AxisTick> ticks = ticks_every(step, start, end, unit, gutter, plot_width);
      if (!ticks.empty()) return ticks;
    }
  }
  return one_tick();
}

std::vector<ReportRow> rows_of(int world, int per_row) {
  std::vector<ReportRow> rows;
  for (int first = 0; first < world; first += per_row) {
    const int last = std::min(world, first + per_row) - 1;
    rows.push_back({.label = first == last ? fmt::format("rank {}", first)
                                           : fmt::format("ranks {}-{}", first, last),
                    .first_rank = first,
                    .last_rank = last});
  }
  return rows;
}

}  // namespace

double label_width(std::string_view text) { return kCharPx * static_cast<double>(text.size()); }

TimelineLayout timeline_layout(int world, TimeBase base, double start, double end,
                               const LayoutOptions& options) {
  TimelineLayout out{.plot_width = options.plot_width, .top = kTop};
  const auto max_rows = static_cast<int>(std::max<std::size_t>(1, options.max_rows));
  while (static_cast<long long>(out.ranks_per_row) * max_rows < world) out.ranks_per_row *= 2;
  out.rows = rows_of(world, out.ranks_per_row);
  const auto rows = static_cast<double>(std::max<std::size_t>(1, out.rows.size()));
  out.row_height = std::clamp(std::floor(kRowsPx / rows), kMinRowPx, kMaxRowPx);
  double widest = 0;
  for (std::size_t i = 0; i < out.rows.size(); ++i) {
    out.rows[i].y = out.top + static_cast<double>(i) * out.row_height;
    widest = std::max(widest, label_width(out.rows[i].label));
  }
  out.gutter = std::max(64.0, widest + 10);
  const Unit unit = unit_for(base, end - start);
  out.unit = unit.name;
  out.ticks = axis_ticks(base, start, end, unit, out.gutter, out.plot_width);
  const AxisTick& last = out.ticks.back();
  const double plot_end = out.gutter + out.plot_width;
  out.right_margin = std::max(48.0, last.x + kLabelOffset + last.width + 4 - plot_end);
  return out;
}

nlohmann::json to_json(const TimelineLayout& layout) {
  nlohmann::json rows = nlohmann::json::array();
  for (const ReportRow& r : layout.rows) {
    rows.push_back({{"label", r.label}, {"first", r.first_rank}, {"last", r.last_rank}, {"y", r.y}});
  }
  nlohmann::json ticks = nlohmann::json::array();
  for (const AxisTick& t : layout.ticks) {
    ticks.push_back({{"at", t.at}, {"label", t.label}, {"x", t.x}, {"width", t.width}});
  }
  return {{"gutter", layout.gutter},
          {"plot_width", layout.plot_width},
          {"top", layout.top},
          {"row_height", layout.row_height},
          {"ranks_per_row", layout.ranks_per_row},
          {"unit", layout.unit},
          {"right_margin", layout.right_margin},
          {"rows", std::move(rows)},
          {"ticks", std::move(ticks)}};
}

}  // namespace ranklab
