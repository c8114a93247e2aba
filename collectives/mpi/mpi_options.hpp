// How the MPI backend runs a job: the options `ranklab run --backend mpi` gives every process.
#pragma once

#include <chrono>

namespace ranklab {

struct MpiOptions {
  /// Native collectives call MPI's own (`--algo mpi`): fastest, but MPI reduces in its own
  /// order, so floating-point results agree with the emulator's only within rounding.
  /// Otherwise they run `direct`: reduced in ascending group rank, bitwise the emulator's.
  bool library_collectives = false;
  /// Every collective first exchanges the members' fingerprints (--check-collectives), so a
  /// mismatch fails every member with the table of calls before anything can hang.
  bool check_collectives = false;
  /// A wait longer than this throws TimeoutError (0: wait forever).
  std::chrono::milliseconds timeout{0};
};

}  // namespace ranklab
