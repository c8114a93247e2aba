// The HTML report page (traces/report/report.html), embedded at build time by embed.cmake.
#pragma once

#include <string_view>

namespace ranklab::detail {

/// The page, with the marker kReportDataMarker where the report's JSON data goes.
std::string_view html_report_template();

inline constexpr std::string_view kReportDataMarker = "@RANKLAB_DATA@";

}  // namespace ranklab::detail
