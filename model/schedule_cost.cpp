#include "model/schedule_cost.hpp"

#include <algorithm>

#include "traces/trace_builder.hpp"

namespace ranklab {

Trace schedule_trace(const Schedule& schedule, const ScheduleCostShape& shape) {
  const ScheduleSpec& spec = schedule.spec;
  TraceBuilder b(static_cast<int>(schedule.stages.size()));
  for (std::size_t p = 0; p < schedule.stages.size(); ++p) {
    const int rank = static_cast<int>(p);
    for (const Step& step : schedule.stages[p]) {
      if (step.compute) {
        const Pass& pass = step.pass;
        const int first = spec.virtual_stage(rank, pass.chunk) * shape.layers_per_chunk;
        const bool forward = pass.kind == PassKind::forward;
        for (int i = 0; i < shape.layers_per_chunk; ++i) {
          // Backward runs the chunk's layers last to first, as the model does.
          const int layer = forward ? first + i : first + shape.layers_per_chunk - 1 - i;
          b.compute_event(rank, {.label = forward ? "forward" : "backward",
                                 .layer = layer,
                                 .microbatch = pass.microbatch,
                                 .chunk = pass.chunk,
                                 .seconds = forward ? shape.forward_seconds
                                                    : shape.backward_seconds});
        }
        continue;
      }
      for (const Transfer& t : step.transfers) {
        if (t.send) {
          b.isend(rank, t.peer, DataType::u8, shape.message_bytes, tag_of(t.payload));
        } else {
          b.irecv(rank, t.peer, DataType::u8, shape.message_bytes, tag_of(t.payload));
        }
      }
      b.wait_all(rank);
    }
  }
  return b.build({{"program", "schedule"}, {"schedule", spec.describe()}}).trace;
}

VirtualTimes predict_schedule(const Schedule& schedule, const CostModel& model,
                              const ScheduleCostShape& shape) {
  return simulate(schedule_trace(schedule, shape), model);
}

double schedule_bubble(const Schedule& schedule, const ScheduleCostShape& shape) {
  return predict_schedule(schedule, CostModel(Topology{}), shape).bubble;
}

double ideal_bubble(const ScheduleSpec& spec) {
  const double p = spec.pp;
  const double m = spec.microbatches;
  const double v = spec.virtual_stages;
  if (m < p && v > 1) return ((p - m) * v + m - 1) / (p * v + m - 1);
  return (p - 1) / (v * m + p - 1);
}

double peak_activations(const Schedule& schedule) {
  int peak = 0;
  for (int p = 0; p < static_cast<int>(schedule.stages.size()); ++p) {
    peak = std::max(peak, schedule.peak_in_flight(p));
  }
  return static_cast<double>(peak) / schedule.spec.virtual_stages;
}

}  // namespace ranklab
