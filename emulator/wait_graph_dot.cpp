// The wait-for graph of a deadlocked run in Graphviz's DOT language (`--wait-graph`).
// Render with `dot -Tsvg wait.dot -o wait.svg`.
#include <fmt/format.h>

#include "emulator/wait_graph_dot.hpp"

namespace ranklab {
namespace {

// A DOT string literal's contents: quotes and backslashes escaped, lines as \n.
std::string dot_quoted(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string to_dot(const WaitForGraph& graph, std::string_view title) {
  std::string out = "digraph wait_for {\n";
  out += fmt::format("  label={};\n  labelloc=t;\n  fontname=\"Helvetica\";\n", dot_quoted(title));
  out += "  node [fontname=\"Helvetica\", fontsize=11];\n";
  out += "  edge [fontname=\"Helvetica\", fontsize=10];\n";
  for (const auto& node : graph.nodes) {
    if (node.state == "blocked") {
      out += fmt::format("  r{} [shape=box, style=rounded, label={}];\n", node.rank,
                         dot_quoted(fmt::format("rank {}\n{}", node.rank, node.call)));
    } else {
      // Ranks that ended (or still run) while others wait for them: the usual culprits.
      const bool failed = node.state == "failed";
      out += fmt::format(
          "  r{} [shape=ellipse, style=filled, fillcolor={}, label={}];\n", node.rank,
          failed ? "\"#f4b6b6\"" : "\"#dddddd\"",
          dot_quoted(fmt::format("rank {}\n{}", node.rank, node.state)));
    }
  }
  for (const auto& edge : graph.edges) {
    const char* style = edge.lost       ? ", style=dashed, color=gray40, fontcolor=gray40"
                        : edge.in_cycle ? ", color=red, fontcolor=red, penwidth=2"
                                        : "";
    out += fmt::format("  r{} -> r{} [label={}{}];\n", edge.from, edge.to, dot_quoted(edge.label),
                       style);
  }
  return out + "}\n";
}

}  // namespace ranklab
