// Receives from any source on two or more threads: which sender each one took was decided
// by the threads' timing (DESIGN.md allows it), so the same seed and policy may match them
// otherwise on the next run. The report says so, and how to get this outcome again on one
// thread: the trace pins every match (`ranklab replay`, --wildcards recorded).
#pragma once

#include <string>
#include <vector>

#include "traces/event.hpp"

namespace ranklab::cli {

/// One line per rank, group and tag whose receives from any source took two or more
/// senders in `trace` (recorded on two or more threads), in rank order: "rank 0's receives
/// from any source (tag 0 in world: ops #3, #4, #5) took ranks 2, 1, 3 in that order".
std::vector<std::string> timing_decided_matches(const Trace& trace);

/// The report's lines for them, or none (one thread: the policy decides): the matches, then
/// the command that reproduces this outcome on one thread (`trace_path`: the trace written;
/// empty: how to record one).
std::vector<std::string> timing_report(const Trace& trace, int threads,
                                       const std::string& trace_path);

}  // namespace ranklab::cli
