// The sections of a deadlock's report (FailureAnalysis) that the snapshot alone decides:
// the summary, the blocked operations, the cycles and the culprits section.
#pragma once

#include <string>
#include <vector>

#include "emulator/detail/wait_graph.hpp"
#include "emulator/diagnosis/snapshot.hpp"
#include "comm/run_report.hpp"

namespace ranklab::diagnosis {

/// "deadlock: 2 ranks blocked, none can proceed; cycle 0 -> 1 -> 0".
std::string deadlock_summary(const FabricSnapshot& snapshot, const detail::WaitGraph& graph);

/// The blocked ranks' operations, by rank (the first kMaxListed), and their count.
void list_blocked(const FabricSnapshot& snapshot, FailureAnalysis& analysis);

/// The culprits section: ranks waited for that returned or failed, members that never
/// joined a collective the others are blocked in, and each cycle.
std::vector<std::string> culprit_findings(const FabricSnapshot& snapshot,
                                          const detail::WaitGraph& graph);

/// A deadlock's analysis under `headline`, all but its last events (last_events_of).
FailureAnalysis deadlock_analysis(const FabricSnapshot& snapshot, const detail::WaitGraph& graph,
                                  std::string headline);

/// The ranks whose last events a deadlock's report shows, in rank order: the blocked ones
/// while fewer than kMaxListed are listed, and the first four that finished and four that
/// failed.
std::vector<int> last_events_of(const FabricSnapshot& snapshot);

}  // namespace ranklab::diagnosis
