// Pieces of the main job's text report (cli/train_report.hpp) that a run cannot reach
// cheaply: a wall time of minutes.
#include "cli/train_report.hpp"

#include <gtest/gtest.h>

namespace ranklab::cli {
namespace {

//! Below 10 s in milliseconds, from there in seconds: "61582.4 ms" read as a number to
//! decode (issue 28 §3).
TEST(TrainReportTest, WallTimeInAReadableUnit) {
  EXPECT_EQ(wall_time(4.21), "4.2 ms");
  EXPECT_EQ(wall_time(9999.9), "9999.9 ms");
  EXPECT_EQ(wall_time(10000), "10.0 s");
  EXPECT_EQ(wall_time(61582.4), "61.6 s");
}

}  // namespace
}  // namespace ranklab::cli
