// What the MPI tests share: the session, and running one rank program on the emulator with
// the MPI job's world size to get the reference every process compares its own rank with.
#pragma once

#include <functional>

#include "collectives/communicator.hpp"
#include "collectives/mpi/mpi_session.hpp"

namespace ranklab::testing {

void set_session(MpiSession& session);
MpiSession& session();

/// Runs `program` on an emulator cluster of the MPI world's size (every rank, in this
/// process); fails the test if the run does not end ok.
void run_on_emulator(const std::function<void(Communicator&)>& program);

}  // namespace ranklab::testing
