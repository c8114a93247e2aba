// Two ranks that call collectives on two groups in opposite orders cannot be caught when
// they post: each blocks in its first call and never posts its second (fabric_fingerprint.cpp).
// At deadlock time it shows as a wait-for cycle whose ranks are all inside collectives of
// more than one group: an ordering mismatch (exit 4) rather than a plain deadlock.
#pragma once

#include <optional>
#include <string>

#include "emulator/detail/wait_graph.hpp"
#include "emulator/diagnosis/snapshot.hpp"
#include "comm/run_report.hpp"

namespace ranklab::diagnosis {

struct OrderMismatch {
  Culprit culprit;      ///< collective-order; ranks.front() is the first rank that differs
  std::string table;    ///< who waits for whom inside what: the report's preamble
  std::string summary;  ///< one line
};

/// The first cycle of `graph` through collectives of two or more groups, judged against
/// the group of its lowest rank; nothing if there is none.
std::optional<OrderMismatch> find_collective_order(const FabricSnapshot& snapshot,
                                                   const detail::WaitGraph& graph);

}  // namespace ranklab::diagnosis
