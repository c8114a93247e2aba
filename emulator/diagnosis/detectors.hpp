// The one-line diagnosis of a deadlock (RunReport::culprit): one detector per kind of bug,
// each reading only the snapshot (and its wait-for graph). The kinds, most specific first:
//   lost-message         a blocked receive waits for a message that a drop fault removed
//   tag-mismatch         a blocked receive has an unmatched message from its source with
//                        another tag
//   source-mismatch      ... a message with its tag from another source
//   group-mismatch       ... a message from its source with its tag, in another group
//   missing-participant  ranks wait for a rank that has returned
//   send-cycle           a wait-for cycle of blocking sends (each sends before it receives)
//   recv-cycle           a cycle of blocking receives (each receives before it sends)
//   collective-vs-p2p    a cycle in which some ranks are in a collective and others in a
//                        send or receive: they disagree on what comes next
//   p2p-cycle            a cycle of sends and receives
//   deadlock             none of the above (ranks wait for ranks blocked elsewhere)
// A cycle through collectives of two groups is a collective-order mismatch, found before
// any of these (collective_order.hpp).
#pragma once

#include <optional>

#include "emulator/detail/wait_graph.hpp"
#include "emulator/diagnosis/snapshot.hpp"
#include "comm/run_report.hpp"

namespace ranklab::diagnosis {

/// The first blocked receive (by rank) that waits for a message a drop fault removed.
std::optional<Culprit> find_lost_message(const FabricSnapshot& snapshot);

/// The first blocked receive (by rank) with an unmatched message addressed to it that
/// misses it in one respect only: its tag, its source or its group.
std::optional<Culprit> find_near_miss(const FabricSnapshot& snapshot);

/// A rank that returned while others wait for it (the first such wait, by waiting rank).
std::optional<Culprit> find_missing_participant(const FabricSnapshot& snapshot,
                                                const detail::WaitGraph& graph);

/// The shape of the graph's first cycle (send-, recv-, p2p-cycle or collective-vs-p2p), or
/// a plain `deadlock` when there is no cycle.
Culprit classify_cycle(const FabricSnapshot& snapshot, const detail::WaitGraph& graph);

/// The most specific of the above.
Culprit diagnose_deadlock(const FabricSnapshot& snapshot, const detail::WaitGraph& graph);

}  // namespace ranklab::diagnosis
