// How an exception leaves the command (cli/error_exit.hpp): bad input is exit 1, a
// logic_error is a bug in ranklab and says so.
#include "cli/error_exit.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>

#include "traces/error.hpp"

namespace ranklab::cli {
namespace {

TEST(ErrorExitTest, RanklabErrorsAreBadUsageOrInput) {
  std::ostringstream err;
  EXPECT_EQ(report_error(UsageError("--world must be positive"), err), 1);
  EXPECT_EQ(err.str(), "ranklab: error: --world must be positive\n");
  err.str("");
  EXPECT_EQ(report_error(TraceError("t.jsonl:3: bad event"), err), 1);
  EXPECT_EQ(err.str(), "ranklab: error: t.jsonl:3: bad event\n");
}

TEST(ErrorExitTest, OtherRuntimeErrorsExitOne) {
  std::ostringstream err;
  EXPECT_EQ(report_error(std::runtime_error("disk full"), err), 1);
  EXPECT_EQ(err.str(), "ranklab: error: disk full\n");
}

TEST(ErrorExitTest, LogicErrorIsAnInternalError) {
  std::ostringstream err;
  EXPECT_EQ(report_error(std::out_of_range("vector::_M_range_check"), err), kExitInternalError);
  EXPECT_EQ(err.str(), "ranklab: internal error: vector::_M_range_check (a bug in ranklab)\n");
}

}  // namespace
}  // namespace ranklab::cli
