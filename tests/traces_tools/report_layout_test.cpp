// The HTML report's timeline layout (traces/report_layout.hpp): an axis whose ticks carry
// the unit the span reads in, rows that stay few and labelled at 512 ranks, and labels that
// do not overlap. (chromium_report_test.cpp checks the drawn page too.)
#include "traces/report_layout.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "tests/traces/sample_trace.hpp"
#include "traces/export_html.hpp"

namespace ranklab {
namespace {

bool ends_with(const std::string& text, const std::string& tail) {
  return text.size() >= tail.size() && text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

// Every tick in [start, end], increasing, labelled "<number> <unit>" ("1 tick"), no two alike, each
// label ending (2 px right of its tick, estimated width) before the next one starts.
void expect_readable_axis(const TimelineLayout& layout, double start, double end) {
  ASSERT_GE(layout.ticks.size(), 3u) << layout.unit;
  std::set<std::string> labels;
  for (std::size_t i = 0; i < layout.ticks.size(); ++i) {
    const AxisTick& t = layout.ticks[i];
    EXPECT_GE(t.at, start - 1e-9);
    EXPECT_LE(t.at, end + 1e-9);
    EXPECT_TRUE(ends_with(t.label, " " + layout.unit) || t.label == "1 tick") << t.label;
    EXPECT_TRUE(labels.insert(t.label).second) << "two ticks read " << t.label;
    EXPECT_DOUBLE_EQ(t.width, label_width(t.label));
    if (i == 0) continue;
    const AxisTick& before = layout.ticks[i - 1];
    EXPECT_GT(t.at, before.at);
    EXPECT_LT(before.x + before.width, t.x) << before.label << " runs into " << t.label;
  }
  // The last label fits in the drawing.
  const AxisTick& last = layout.ticks.back();
  EXPECT_LE(last.x + 2 + last.width, layout.gutter + layout.plot_width + layout.right_margin);
}

//! The unit follows the span: ns under 10 µs, us under 10 ms, ms under 10 s, s beyond, and
//! Lamport ticks on a logical axis; odd starts and ends too.
TEST(ReportLayoutTest, AxisTicksCarryTheSpansUnit) {
  struct Case {
    TimeBase base;
    double start, end;  // µs (or ticks)
    const char* unit;
  };
  for (const Case& c : {Case{TimeBase::virtual_time, 0, 3.2, "ns"},
                        Case{TimeBase::virtual_time, 0.25, 7.9, "ns"},
                        Case{TimeBase::virtual_time, 0, 219, "us"},
                        Case{TimeBase::virtual_time, 123.4, 9876.5, "us"},
                        Case{TimeBase::virtual_time, 0, 21000, "ms"},
                        Case{TimeBase::virtual_time, 0, 4.5e6, "ms"},
                        Case{TimeBase::virtual_time, 0, 3e7, "s"},
                        Case{TimeBase::virtual_time, 0, 9.2e15, "s"},  // saturated at 2^63 ns
                        Case{TimeBase::lamport, 0, 17, "ticks"},
                        Case{TimeBase::lamport, 0, 100000, "ticks"}}) {
    const TimelineLayout layout = timeline_layout(8, c.base, c.start, c.end);
    EXPECT_EQ(layout.unit, c.unit) << c.start << ".." << c.end;
    expect_readable_axis(layout, c.start, c.end);
  }
  // 0..219 us over 1100 px: ticks every 10 us (50 px), the finest step that leaves the
  // widest label ("200 us", 42 px) its 6 px gap.
  const TimelineLayout us = timeline_layout(8, TimeBase::virtual_time, 0, 219);
  EXPECT_EQ(us.ticks[0].label, "0 us");
  EXPECT_EQ(us.ticks[1].label, "10 us");
  EXPECT_EQ(us.ticks.size(), 22u);
  // An empty span still has its one tick.
  const TimelineLayout empty = timeline_layout(2, TimeBase::lamport, 0, 0);
  ASSERT_EQ(empty.ticks.size(), 1u);
  EXPECT_EQ(empty.ticks[0].label, "0 ticks");
}

//! Up to 64 ranks a row each; beyond, a power of two of consecutive ranks per row, so 512
//! ranks are 64 rows of 8 and 4096 are 64 of 64; every rank in exactly one row, in order.
TEST(ReportLayoutTest, RowsStayFewAtManyRanks) {
  struct Case {
    int world;
    std::size_t rows;
    int per_row;
    const char* last_label;
  };
  for (const Case& c : {Case{8, 8, 1, "rank 7"}, Case{64, 64, 1, "rank 63"},
                        Case{65, 33, 2, "rank 64"}, Case{100, 50, 2, "ranks 98-99"},
                        Case{512, 64, 8, "ranks 504-511"}, Case{4096, 64, 64, "ranks 4032-4095"}}) {
    const TimelineLayout layout = timeline_layout(c.world, TimeBase::lamport, 0, 10);
    EXPECT_EQ(layout.rows.size(), c.rows) << c.world;
    EXPECT_EQ(layout.ranks_per_row, c.per_row) << c.world;
    EXPECT_EQ(layout.rows.back().label, c.last_label) << c.world;
    int next = 0;
    for (const ReportRow& r : layout.rows) {
      EXPECT_EQ(r.first_rank, next);
      EXPECT_GE(r.last_rank, r.first_rank);
      next = r.last_rank + 1;
    }
    EXPECT_EQ(next, c.world);
  }
}

//! Row labels: one per row, 11 px text in rows at least 14 px apart, all left of the plot.
TEST(ReportLayoutTest, RowLabelsDoNotOverlap) {
  for (const int world : {2, 8, 40, 64, 512}) {
    const TimelineLayout layout = timeline_layout(world, TimeBase::virtual_time, 0, 100);
    EXPECT_GE(layout.row_height, 14.0) << world;
    for (std::size_t i = 0; i < layout.rows.size(); ++i) {
      EXPECT_LE(label_width(layout.rows[i].label) + 4, layout.gutter) << layout.rows[i].label;
      if (i > 0) {
        EXPECT_GE(layout.rows[i].y - layout.rows[i - 1].y, 14.0) << world;
      }
    }
  }
}

//! The report embeds the layout: a 512-rank trace gets 64 rows and an axis with units.
TEST(ReportLayoutTest, ReportCarriesTheLayout) {
  const nlohmann::json data = html_report_data(trace_samples::large_trace(512, 4), {});
  EXPECT_EQ(data["ranks"].size(), 512u);
  const nlohmann::json& layout = data["layout"];
  EXPECT_EQ(layout["rows"].size(), 64u);
  EXPECT_EQ(layout["ranks_per_row"], 8);
  EXPECT_EQ(layout["rows"][1]["label"], "ranks 8-15");
  EXPECT_EQ(layout["unit"], "ticks");
  ASSERT_GE(layout["ticks"].size(), 2u);
  EXPECT_TRUE(ends_with(layout["ticks"][1]["label"].get<std::string>(), " tick") ||
              ends_with(layout["ticks"][1]["label"].get<std::string>(), " ticks"));
}

//! A logical axis reads "1 tick", never "1 ticks" (issue 28 §2), and its other labels stay
//! plural ("0 ticks", "2 ticks").
TEST(ReportLayoutTest, OneTickIsSingular) {
  const TimelineLayout ticks = timeline_layout(2, TimeBase::lamport, 0, 4);
  std::vector<std::string> labels;
  for (const AxisTick& t : ticks.ticks) labels.push_back(t.label);
  EXPECT_NE(std::find(labels.begin(), labels.end(), "1 tick"), labels.end()) << labels.size();
  EXPECT_NE(std::find(labels.begin(), labels.end(), "2 ticks"), labels.end());
  for (const std::string& label : labels) EXPECT_NE(label, "1 ticks");
  const TimelineLayout one = timeline_layout(2, TimeBase::lamport, 1, 1);
  ASSERT_EQ(one.ticks.size(), 1u);
  EXPECT_EQ(one.ticks[0].label, "1 tick");
}

}  // namespace
}  // namespace ranklab
