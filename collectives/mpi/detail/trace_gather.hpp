// One trace for the whole MPI job: every process's recorded events gathered to rank 0.
#pragma once

#include <nlohmann/json.hpp>

#include "collectives/mpi/detail/runtime.hpp"
#include "traces/event.hpp"

namespace ranklab::mpi_detail {

/// Collective over the world (on the end-of-run communicator). Each process sends its
/// events as a trace of its own (JSON Lines); rank 0 reads them back (validating them),
/// merges their groups by name and returns the job's trace with `config` in its header.
/// Other ranks return an empty Trace.
Trace gather_trace(Runtime& runtime, const nlohmann::json& config);

}  // namespace ranklab::mpi_detail
