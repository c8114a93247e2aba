// --check-collectives on MPI (PyTorch's ProcessGroupWrapper): before a collective runs, its
// members exchange their fingerprints with one all_gather, so a member whose call differs
// fails every member with the table of calls instead of a hang or garbage. The emulator
// checks every call this way for free (its fabric sees every member); on MPI it costs one
// small collective per call, so it is an option.
#pragma once

#include <cstdint>

#include "collectives/mpi/detail/runtime.hpp"
#include "comm/call_site.hpp"
#include "comm/fingerprint.hpp"

namespace ranklab::mpi_detail {

/// Exchanges `fingerprint` of the group's collective number `sequence`, and the op # of the
/// call (`rank_seq`: this process's next operation number, as the emulator's table shows it)
/// with the members, and when they differ, every member's call `site`;
/// throws MismatchError with the emulator's table (comm/mismatch_table.hpp) when
/// they differ.
void exchange_fingerprints(Runtime& runtime, const GroupState& group,
                           const CollectiveFingerprint& fingerprint, std::uint64_t sequence,
                           std::uint64_t rank_seq, const SourceSite& site,
                           std::chrono::milliseconds timeout);

}  // namespace ranklab::mpi_detail
