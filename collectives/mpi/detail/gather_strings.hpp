// Strings from every process to rank 0, on the end-of-run communicator.
#pragma once

#include <string>
#include <vector>

#include "collectives/mpi/detail/runtime.hpp"

namespace ranklab::mpi_detail {

/// Collective over the world: every process's `mine`, by rank, at rank 0; empty elsewhere.
std::vector<std::string> gather_strings(Runtime& runtime, const std::string& mine);

}  // namespace ranklab::mpi_detail
