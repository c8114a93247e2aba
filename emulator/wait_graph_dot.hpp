// The wait-for graph of a deadlocked run (RunReport::wait_graph) drawn for `--wait-graph`.
#pragma once

#include <string>
#include <string_view>

#include "comm/run_report.hpp"

namespace ranklab {

/// The graph in Graphviz's DOT language: blocked ranks as boxes with their call, ranks
/// that ended as grey or red ovals, wait-for edges labelled with the call, cycles in red.
std::string to_dot(const WaitForGraph& graph, std::string_view title);

}  // namespace ranklab
