// Strings from every process: to rank 0 on the end-of-run communicator, or to every member
// of a group.
#pragma once

#include <string>
#include <vector>

#include "collectives/mpi/detail/runtime.hpp"

namespace ranklab::mpi_detail {

/// Collective over the world: every process's `mine`, by rank, at rank 0; empty elsewhere.
std::vector<std::string> gather_strings(Runtime& runtime, const std::string& mine);

/// Every member's `mine`, by rank in `comm`, on every member (blocking, collective over
/// `comm`): for the rare paths that must show every member's text (a mismatch's call sites).
std::vector<std::string> all_gather_strings(MPI_Comm comm, const std::string& mine);

}  // namespace ranklab::mpi_detail
