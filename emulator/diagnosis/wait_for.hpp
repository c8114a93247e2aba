// Who waits for whom among the blocked ranks of a snapshot, and the picture of it that
// `--wait-graph` draws.
#pragma once

#include "emulator/detail/wait_graph.hpp"
#include "emulator/diagnosis/snapshot.hpp"
#include "comm/run_report.hpp"

namespace ranklab::diagnosis {

/// A blocked send waits for its destination, a receive for its source (every other member
/// for any source), a collective for the members that have not posted its call; with the
/// graph's cycles (detail::find_cycles, at most kMaxListed).
detail::WaitGraph build_wait_graph(const FabricSnapshot& snapshot);

/// The graph as reports carry it: the blocked ranks and those they wait for (at most 256),
/// the cycles' edges marked, and an edge for each message a drop fault lost between them.
WaitForGraph draw_wait_graph(const FabricSnapshot& snapshot, const detail::WaitGraph& graph);

}  // namespace ranklab::diagnosis
