// How the MPI backend runs a job: the options `ranklab run --backend mpi` gives every process.
#pragma once

#include <chrono>
#include <cstddef>
#include <limits>

#include "comm/device.hpp"

namespace ranklab {

struct MpiOptions {
  /// Native collectives call MPI's own (`--algo mpi`): fastest, but MPI reduces in its own
  /// order, so floating-point results agree with the emulator's only within rounding.
  /// Otherwise they run `direct`: reduced in ascending group rank, bitwise the emulator's.
  bool library_collectives = false;
  /// Every collective first exchanges the members' fingerprints (--check-collectives), so a
  /// mismatch fails every member with the table of calls before anything can hang.
  bool check_collectives = false;
  /// The emulator's send modes: a send of up to this many bytes may complete before its
  /// receive is posted (MPI_Isend, which buffers small messages); a larger one completes
  /// only once it is matched (MPI_Issend). 0 is `rendezvous` (the emulator's default, under
  /// which a send-send cycle hangs on MPI as it deadlocks on the emulator); kEager `eager`.
  std::size_t eager_bytes = 0;
  static constexpr std::size_t kEager = std::numeric_limits<std::size_t>::max();
  /// A wait longer than this throws TimeoutError (0: wait forever).
  std::chrono::milliseconds timeout{0};
  /// Every process's device (comm/device.hpp; rank r's is (kind, r)): buffers on it are
  /// staged through host memory by the Communicator, as on the emulator.
  DeviceKind device = DeviceKind::cpu;
};

}  // namespace ranklab
