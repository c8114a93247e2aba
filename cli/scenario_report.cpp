#include "cli/scenario_report.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "cli/run_diagnosis.hpp"
#include "emulator/report_json.hpp"

namespace ranklab::cli {

void print_text(std::ostream& out, const ScenarioReport& r) {
  fmt::print(out, "scenario {}: world {}, {}\n", r.scenario, r.world, r.cluster);
  for (const std::string& line : r.output) out << line << "\n";
  if (!r.run.ok()) out << "\n" << render_analysis(r.run.analysis) << "\n";
  if (!r.virtual_time.empty()) out << "\n" << r.virtual_time;
  print_diagnosis(out, r.run.culprit, r.run.faults);
  out << "result: " << r.run.summary << "\n";
}

nlohmann::ordered_json to_json(const ScenarioReport& r) { return to_json(r, r.run); }

nlohmann::ordered_json to_json(const ScenarioReport& r, const RunReport& run) {
  nlohmann::ordered_json j = report_header("run", to_string(run.status), exit_code(run.status));
  j["result"] = run.summary;
  j["program"] = "scenario";
  j["scenario"] = r.scenario;
  j["world"] = r.world;
  j["cluster"] = r.cluster;
  j["output"] = r.output;
  j.update(run_report_json(run));
  if (!r.virtual_time_json.is_null()) j["virtual_time"] = r.virtual_time_json;
  return j;
}

}  // namespace ranklab::cli
