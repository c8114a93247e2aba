// What a scenario run reports (`ranklab run --scenario NAME`), and its two renderings: text
// for people, JSON for machines (`--json`, docs/json.md), both from this one structure.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "comm/run_report.hpp"

namespace ranklab::cli {

struct ScenarioReport {
  std::string scenario;
  int world = 0;
  std::string cluster;  ///< "policy rank-order, threads 1, send mode rendezvous, algorithm direct"
  std::vector<std::string> output;  ///< the program's own lines, rank by rank
  RunReport run;
  std::string virtual_time;          ///< with --cost/--topology: the timing section
  nlohmann::json virtual_time_json;  ///< the same as JSON (null without)
};

/// The report as text, up to its result line (the trace line is the caller's).
void print_text(std::ostream& out, const ScenarioReport& report);

/// The same content as JSON.
nlohmann::ordered_json to_json(const ScenarioReport& report);
/// The same, with `run` in place of report.run (the caller has moved it elsewhere).
nlohmann::ordered_json to_json(const ScenarioReport& report, const RunReport& run);

}  // namespace ranklab::cli
