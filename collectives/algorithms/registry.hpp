// Every collective algorithm as one row of collectives/algorithms/registry.cpp: its name
// (--algo, traces, error messages) and the collectives it implements, each with the function
// that runs it. Names, parsing, the CLI's choices and the dispatch all read these rows, so
// adding an algorithm is its file, its enumerator (collectives/options.hpp) and its row.
#pragma once

#include <array>
#include <span>
#include <string_view>
#include <vector>

#include "collectives/options.hpp"
#include "traces/types.hpp"

namespace ranklab {

class PeerLink;
struct CollectiveArgs;

/// One collective an algorithm implements, and the function that runs it. `args` has passed
/// make_signature's shape checks.
struct AlgorithmImplementation {
  OpKind op = OpKind::barrier;
  void (*run)(PeerLink& link, const CollectiveArgs& args) = nullptr;  ///< null: unused slot
};

struct AlgorithmRow {
  Algorithm algorithm;
  std::string_view name;  ///< dashed: "recursive-doubling" (parse_algorithm takes `_` too)
  /// What it implements as point-to-point messages; none for automatic and direct (direct is
  /// the fabric's own rendezvous, for every collective).
  std::array<AlgorithmImplementation, 4> implements;
};

/// Every algorithm, in the enumerators' order (automatic, direct, then the others).
std::span<const AlgorithmRow> algorithm_rows();

/// The names a run may choose (every algorithm but automatic), in the enum's order.
std::vector<std::string_view> algorithm_names();

}  // namespace ranklab
