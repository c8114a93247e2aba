// The executor of a pipeline schedule (model/schedule.hpp): one training step of one rank,
// running its stage's steps in order on its TP shards of its model chunks.
//
//   forward (m, c)   the input of chunk c for micro-batch m (the replica's rows of the
//                    micro-batch for virtual stage 0; else what was received, or chunk
//                    c-1's output when PP = 1) goes through the chunk's layers with the TP
//                    regions; the last virtual stage adds micro-batch m's share of the loss
//                    and computes the output gradient, scaled for the whole batch
//   backward (m, c)  the output gradient (received, from the loss, or from chunk c+1 when
//                    PP = 1) goes back through the chunk; the weight gradients of the
//                    chunk's first backward are written, the later ones added (GradMode);
//                    virtual stage 0 computes no input gradient (the data needs none)
//   communication    every transfer posted (isend / irecv on the PP group), then each waited
//                    for: activations on tag 0, their gradients on tag 1
// and at the end every gradient is averaged over DP, as in the seed.
//
// Each micro-batch's loss gradient is 2(y - t)/(B·S·H), the rows of the whole batch's, so
// the gradients differ from the whole-batch step only in the order their sums are taken:
// bit for bit equal for M = 1 (the seed schedule's trace is the seed's, call for call), and
// equal across schedules with the same M (each chunk sees its micro-batches in order).
// Under sequence parallelism (TpComm::sequence_parallel) activations and gradients cross
// stages as sequence shards, 1/TP of the rows, and are gathered where full rows are needed.
// Only the communicator API is used. Every tensor (chunks, inputs, targets, out) is on
// `device` (model/device.hpp), whose kernels run the layers and whose memory the
// communication buffers name.
#pragma once

#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "model/parallel_step.hpp"
#include "model/schedule.hpp"
#include "model/step_options.hpp"

namespace ranklab {

namespace detail {
template <typename Scalar>
class StageRunner;
}  // namespace detail

/// One rank's pipeline step, set up once and run as often as asked: the same step as
/// pipeline_step below, whose buffers (activations, the layers' caches, gradients, the hooks
/// and labels of the communication) are kept from one step to the next instead of made
/// afresh. Every argument of the constructor must outlive it.
template <typename Scalar>
class PipelineStep {
 public:
  PipelineStep(ParallelLayout& layout, const Schedule& schedule, TpComm tp_comm,
               std::int64_t seq, const std::vector<std::vector<LayerParams<Scalar>>>& chunks,
               const ModelDevice<Scalar>& device = cpu_device<Scalar>());
  ~PipelineStep();
  PipelineStep(const PipelineStep&) = delete;
  PipelineStep& operator=(const PipelineStep&) = delete;

  /// One step, as pipeline_step. `out` may be the last step's: its storage is reused.
  void operator()(ConstMatrixRef<Scalar> inputs, ConstMatrixRef<Scalar> targets,
                  RankResult<Scalar>& out, std::string_view label_suffix = {},
                  const std::function<void()>& after_pass = {});

 private:
  std::unique_ptr<detail::StageRunner<Scalar>> runner_;
};

/// Runs stage layout.coords().p of `schedule` (built for layout's PP) on the rank's TP
/// shards `chunks` (one vector of layers per chunk, chunk order), with its replica's
/// `inputs` and `targets` [B·S, H] of sequence length `seq`. Fills out.output (the stage's
/// last chunk's output; for the last stage the model output; under sp before the last
/// stage the rank's sequence shard), out.loss (last stage) and out.grads (every layer of
/// every chunk, DP-averaged). Blocking; throws what the communicator throws, and
/// UsageError for a message of the wrong size. `label_suffix` ends the label of every
/// communication call (", step 3": model/training.hpp), empty for the seed's labels.
/// `after_pass` (may be empty) is called after each of the stage's compute passes, the
/// forward or backward of one micro-batch through one chunk: a long step's progress.
template <typename Scalar>
void pipeline_step(ParallelLayout& layout, const Schedule& schedule, TpComm tp_comm,
                   std::int64_t seq, const std::vector<std::vector<LayerParams<Scalar>>>& chunks,
                   ConstMatrixRef<Scalar> inputs, ConstMatrixRef<Scalar> targets,
                   RankResult<Scalar>& out,
                   const ModelDevice<Scalar>& device = cpu_device<Scalar>(),
                   std::string_view label_suffix = {},
                   const std::function<void()>& after_pass = {});

}  // namespace ranklab
