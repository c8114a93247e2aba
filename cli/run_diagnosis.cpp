#include "cli/run_diagnosis.hpp"

#include <filesystem>
#include <ostream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "emulator/wait_graph_dot.hpp"
#include "traces/output_file.hpp"

namespace ranklab::cli {

void print_diagnosis(std::ostream& out, const Culprit& culprit,
                     const std::vector<std::string>& faults) {
  for (const std::string& line : faults) out << "fault: " << line << "\n";
  if (culprit.kind != CulpritKind::none) out << culprit_line(culprit) << "\n";
}

void write_wait_graph(const std::string& path, const RunReport& report) {
  if (path.empty()) return;
  if (report.wait_graph.empty()) {
    spdlog::warn("--wait-graph {}: no rank ended blocked ({}), so there is no graph to write",
                 path, to_string(report.status));
    return;
  }
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  write_output_file(path, "the wait-for graph",
                    [&](std::ostream& out) { out << to_dot(report.wait_graph, report.summary); });
}

}  // namespace ranklab::cli
