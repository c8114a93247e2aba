// `ranklab run` with no --scenario: the main job, the seed's training step (issue 3 §5).
// By default TP2 PP2 DP2 on 8 ranks, B8 S16 H32 I64 L4, float32: every rank runs one step
// of model/parallel_step.hpp on the emulator, is checked against the dense reference (and
// PyTorch's per-rank gradients with --init-from), and the traffic per group kind is counted
// from the trace, which is written to traces/main.jsonl.
#pragma once

#include <optional>

#include "cli/cluster_flags.hpp"
#include "cli/cost_flags.hpp"
#include "cli/train_flags.hpp"
#include "cli/train_report.hpp"

namespace ranklab::cli {

/// The trace the main job writes unless --trace names another file.
inline constexpr const char* kMainTrace = "traces/main.jsonl";

/// Resolves the flags (and, with --init-from, the golden set's manifest) into a job.
/// `world` is --world, which must then equal TP*PP*DP. Throws UsageError with one line for
/// a bad mode, order or dtype, a layout that does not split the model, or a flag that
/// contradicts the golden set.
TrainSpec resolve_train_spec(const TrainFlags& flags, std::optional<int> world);

/// Runs the main job and prints its report (text, or JSON with --json); returns the exit
/// code (DESIGN.md §7: 0 ok, 2 a check failed, 3-5 the run failed). `world` is --world if
/// given; with `cost` naming a model the trace is also timed under it. Throws UsageError
/// for bad flags before any rank starts.
int train_command(const ClusterFlags& cluster, const TrainFlags& flags, std::optional<int> world,
                  const CostFlags& cost = {});

}  // namespace ranklab::cli
