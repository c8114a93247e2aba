// Reports as data: the fields every `--json` document shares, and a run's report as JSON
// (docs/json.md). Each command renders its text and its JSON from one report structure.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "comm/run_report.hpp"

namespace ranklab {

/// The version of the JSON reports' schema (docs/json.md): every `--json` document's
/// "schema" is "ranklab-report/N"; N grows when a field changes meaning or goes.
inline constexpr int kReportSchemaVersion = 1;

/// The fields every `--json` document starts with: schema, command, status, exit_code.
nlohmann::ordered_json report_header(std::string_view command, std::string_view status,
                                     int exit_code);

/// A run's report as JSON: summary, culprit (null if ok), blocked operations, wait-for
/// cycles, per-rank outcomes, faults and the analysis (docs/json.md, "run"). Merged into
/// each command's document.
nlohmann::ordered_json run_report_json(const RunReport& report);

/// One operation as JSON: rank, op, group, call, site {file, line, function, label}.
nlohmann::ordered_json operation_json(const ReportedOperation& op);

}  // namespace ranklab
