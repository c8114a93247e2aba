// `ranklab stats --format nccl-ras SNAPSHOT [LATER...]`: what NCCL RAS snapshots say about a
// job (traces/nccl_ras_verdict.hpp): who is behind on which communicator, who is missing.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ranklab::cli {

/// The --format value that routes stats here.
inline constexpr std::string_view kRasFormat = "nccl-ras";

/// Prints the verdict on the snapshots at `paths` (in the order taken), as text or
/// --json; returns the exit code (0: the snapshots were read, whatever they say).
int ras_stats(const std::vector<std::string>& paths, bool json);

}  // namespace ranklab::cli
