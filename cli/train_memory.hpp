// The main job's memory, estimated from its flags before anything is allocated: a shape or
// a step count too large for this machine is one usage error naming the flags, the estimate
// and the limit, instead of a bare std::bad_alloc after minutes (issue 28 §4:
// `--hidden 65536 --inter 65536`, `--steps 2147483647`, `--layers 1048576 --pp 2`).
#pragma once

#include <cstdint>

#include "cli/train_report.hpp"

namespace ranklab::cli {

/// What the main job `spec` takes at least, in bytes (in double: the products of huge
/// flags must not wrap), by part. A lower bound: what it leaves out (activations on the
/// ranks, the trace, the dense run's temporaries) only adds.
struct TrainMemory {
  double parameters = 0;   ///< the model and its gradients: once for the dense reference,
                           ///< once per DP replica spread over its ranks, and the problem's
  double activations = 0;  ///< one replica's dense forward pass, kept for backward, and the data
  double records = 0;      ///< with --steps > 1: the per-rank, per-step check records

  double total() const { return parameters + activations + records; }
};

TrainMemory estimate_train_memory(const TrainSpec& spec);

/// Throws UsageError when estimate_train_memory(spec) exceeds --max-memory-mib `mib` (0:
/// the default, half of this machine's memory).
void check_train_memory(const TrainSpec& spec, std::uint64_t mib);

}  // namespace ranklab::cli
