#include "emulator/report_json.hpp"

#include <fmt/format.h>

namespace ranklab {

namespace {

using Json = nlohmann::ordered_json;

Json site_json(const CallSite& site) {
  if (site.empty()) return nullptr;
  return {{"file", site.file}, {"line", site.line}, {"function", site.function},
          {"label", site.label}};
}

Json operations_json(const std::vector<ReportedOperation>& ops) {
  Json out = Json::array();
  for (const ReportedOperation& op : ops) out.push_back(operation_json(op));
  return out;
}

Json culprit_json(const Culprit& c) {
  if (c.kind == CulpritKind::none) return nullptr;
  return {{"kind", culprit_kind_name(c)},
          {"text", c.text},
          {"line", culprit_line(c)},
          {"ranks", c.ranks},
          {"groups", c.groups},
          {"operations", operations_json(c.operations)}};
}

}  // namespace

Json report_header(std::string_view command, std::string_view status, int exit_code) {
  return {{"schema", fmt::format("ranklab-report/{}", kReportSchemaVersion)},
          {"command", command},
          {"status", status},
          {"exit_code", exit_code}};
}

Json operation_json(const ReportedOperation& op) {
  return {{"rank", op.rank},
          {"op", op.op},
          {"group", op.group},
          {"call", op.call},
          {"site", site_json(op.site)},
          {"text", op.describe()}};
}

Json run_report_json(const RunReport& report) {
  const FailureAnalysis& a = report.analysis;
  Json outcomes = Json::array();
  for (std::size_t r = 0; r < report.ranks.size(); ++r) {
    const RankOutcome& o = report.ranks[r];
    outcomes.push_back({{"rank", r}, {"state", to_string(o.state)}, {"error", o.error}});
  }
  Json last_events = Json::array();
  for (const RankEvents& e : a.last_events) {
    last_events.push_back({{"rank", e.rank}, {"events", e.events}});
  }
  return {{"run_status", to_string(report.status)},
          {"summary", report.summary},
          {"culprit", culprit_json(report.culprit)},
          {"blocked", operations_json(a.blocked)},
          {"blocked_total", a.blocked_total},
          {"cycles", a.cycles},
          {"outcomes", outcomes},
          {"root_cause_rank", report.root_cause_rank},
          {"faults", report.faults},
          {"analysis",
           {{"preamble", a.preamble},
            {"headline", a.headline},
            {"findings", a.culprits},
            {"last_events", last_events}}},
          {"details", report.details}};
}

}  // namespace ranklab
