// What every run command prints besides the emulator's report: the injected faults, the
// culprit line, and the wait-for graph file (--wait-graph).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "comm/run_report.hpp"

namespace ranklab::cli {

/// Prints one `fault: ...` line per injected fault and, for a failed run, the line
/// `culprit (KIND): TEXT`. Prints nothing for a clean run without faults.
void print_diagnosis(std::ostream& out, const Culprit& culprit,
                     const std::vector<std::string>& faults);

/// Writes `report`'s wait-for graph to `path` in Graphviz's DOT language, if `path` is set
/// and the run ended with ranks blocked; logs a warning when there was no graph to write.
/// Throws Error naming the path if it cannot be written.
void write_wait_graph(const std::string& path, const RunReport& report);

}  // namespace ranklab::cli
