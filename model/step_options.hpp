// How a training step runs beyond its TP x PP x DP layout (issue 6): the pipeline schedule
// with its micro-batches and model chunks, and how the TP regions communicate. The
// defaults are the seed's step: whole batch, all_reduce.
#pragma once

#include <string>
#include <string_view>

#include "model/parallel_layout.hpp"
#include "model/schedule.hpp"
#include "model/shape.hpp"

namespace ranklab {

/// The collectives of the TP regions.
enum class TpComm {
  all_reduce,         ///< the seed's: all_reduce of each layer's output and input gradient
  sequence_parallel,  ///< Megatron's sequence parallelism: all_gather and reduce_scatter
                      ///< along the sequence dimension
};

/// "allreduce" or "sp".
std::string_view to_string(TpComm comm);
/// Parses "allreduce" / "sp"; throws UsageError naming both.
TpComm parse_tp_comm(std::string_view text);

/// The schedule and TP communication of a step.
struct StepOptions {
  ScheduleKind schedule = ScheduleKind::seed;
  int microbatches = 1;
  int virtual_stages = 1;
  TpComm tp_comm = TpComm::all_reduce;

  /// The schedule spec for a pipeline of `pp` stages.
  ScheduleSpec schedule_spec(int pp) const {
    return {
        .kind = schedule, .pp = pp, .microbatches = microbatches, .virtual_stages = virtual_stages};
  }
  /// Whether this is the seed's step (the trace then stays the seed's, byte for byte).
  bool is_seed() const { return *this == StepOptions{}; }

  /// Throws UsageError (one line) unless the schedule fits `config` and `shape`
  /// (ScheduleSpec::validate) and, for sequence parallelism, TP divides the sequence S.
  void validate(const ParallelConfig& config, const ModelShape& shape) const;

  /// "schedule 1f1b, 4 micro-batches, 1 chunk per stage, TP comm allreduce".
  std::string describe() const;

  friend bool operator==(const StepOptions&, const StepOptions&) = default;
};

}  // namespace ranklab
