// What a pipeline schedule costs, predicted without running the model: the schedule as a
// trace (one rank per stage; a compute event for every layer's forward and backward of
// every micro-batch and chunk, as the training step records them; its communication steps
// as posted-together, waited-together messages), run on a cost model
// (traces/virtual_time.hpp). With free communication the bubble is the schedule's own, and
// the built-in schedules reach the closed form whatever a backward costs against a forward
// (tests check it): (p-1)/(m+p-1) for GPipe and 1F1B, (p-1)/(v m+p-1) for interleaved 1F1B
// with v chunks. Interleaving needs m a multiple of p (ScheduleSpec::validate refuses other
// m > p); with m < p the micro-batches form one group of m, and at each change of chunk
// stage 0 waits p-m chunk passes for the group's first micro-batch to come back round from
// stage p-1, so the bubble is ((p-m)v + m-1)/(p v + m-1) (v = 1: 1F1B's; m = 1: (p-1)/p,
// no better than one chunk).
#pragma once

#include <cstdint>
#include <vector>

#include "model/schedule.hpp"
#include "traces/cost_model.hpp"
#include "traces/event.hpp"
#include "traces/virtual_time.hpp"

namespace ranklab {

/// How big the costed schedule's pieces are.
struct ScheduleCostShape {
  int layers_per_chunk = 1;          ///< layers of one virtual stage
  std::uint64_t message_bytes = 0;   ///< one activation or gradient between stages
  double forward_seconds = 1e-3;     ///< one layer's forward for one micro-batch
  double backward_seconds = 2e-3;    ///< its backward (dX and dW: twice the FLOPs)
};

/// The schedule as a trace: rank p runs stage p's steps.
Trace schedule_trace(const Schedule& schedule, const ScheduleCostShape& shape);

/// The schedule's step on `model` (ranks = stages).
VirtualTimes predict_schedule(const Schedule& schedule, const CostModel& model,
                              const ScheduleCostShape& shape = {});

/// The schedule's bubble by itself: communication free, layer passes as `shape` says.
double schedule_bubble(const Schedule& schedule, const ScheduleCostShape& shape = {});

/// The closed form: (p-1)/(v m+p-1) (v = 1 for GPipe and 1F1B), or ((p-m)v + m-1)/(p v+m-1)
/// for interleaved with m < p (above); 0 with one stage.
double ideal_bubble(const ScheduleSpec& spec);

/// The most micro-batches' activations a stage holds at once, the largest over stages, in
/// micro-batches of the whole stage: forwards awaiting their backward, a chunk's forward
/// counting 1/V.
double peak_activations(const Schedule& schedule);

}  // namespace ranklab
