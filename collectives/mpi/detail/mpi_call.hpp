// Error codes of MPI calls as ranklab exceptions. Every communicator the backend makes
// returns errors (MPI_ERRORS_RETURN) instead of aborting, so a failed call becomes an
// exception that names the call, the group and the peer, like the emulator's.
#pragma once

#include <mpi.h>

#include <string>
#include <string_view>

#include "traces/types.hpp"

namespace ranklab::mpi_detail {

/// MPI's text for an error code (MPI_Error_string).
std::string error_text(int code);

/// Throws for a failed call: MismatchError for a truncated message (the receive buffer was
/// too small), Error otherwise. `what` describes the operation.
[[noreturn]] void throw_mpi_error(int code, std::string_view what);

/// Calls throw_mpi_error unless `code` is MPI_SUCCESS. `what` is only formatted on failure.
template <typename Describe>
void check(int code, Describe&& what) {
  if (code != MPI_SUCCESS) [[unlikely]] throw_mpi_error(code, what());
}

/// The MPI datatype of `type` (fixed-width integers, IEEE floats; 16-bit floats as their bits).
MPI_Datatype mpi_type(DataType type);
/// The MPI operator of `op` on `type`; avg sums (finish_reduction divides afterwards). For
/// the 16-bit floats, a user operator running ranklab's kernel (comm/reduce_kernel.hpp).
MPI_Op mpi_op(ReduceOp op, DataType type);

/// MPI counts are ints: throws UsageError naming `what` when `bytes` does not fit one.
int mpi_count(std::size_t bytes, std::string_view what);

}  // namespace ranklab::mpi_detail
