#include "model/pipeline_step.hpp"

#include <fmt/format.h>

#include <memory>
#include <optional>

#include "model/data_parallel.hpp"
#include "model/label_cache.hpp"
#include "model/sequence_parallel.hpp"
#include "model/span_of.hpp"
#include "model/tensor_parallel.hpp"
#include "traces/error.hpp"

namespace ranklab {

namespace detail {

// One rank's runs of its stage of a schedule. Buffers are per (micro-batch, chunk) slot,
// m·V + c, kept from step to step: a received activation stays until its forward, a
// forward's cache until its backward, an input gradient until it is sent.
template <typename Scalar>
class StageRunner {
 public:
  StageRunner(ParallelLayout& layout, const Schedule& schedule, TpComm tp_comm, std::int64_t seq,
              const std::vector<std::vector<LayerParams<Scalar>>>& chunks,
              const ModelDevice<Scalar>& device)
      : layout_(layout),
        device_(device),
        schedule_(schedule),
        spec_(schedule.spec),
        stage_(layout.coords().p),
        sp_(tp_comm == TpComm::sequence_parallel),
        split_{.seq = seq, .tp = layout.config().tp},
        chunks_(chunks) {
    Communicator& tp = layout.tensor_parallel();
    hooks_ = sp_ ? sequence_parallel_hooks<Scalar>(tp, split_, device.memory())
                 : tensor_parallel_hooks<Scalar>(tp, device.memory());
    name_layer_communication();
    const auto slots = static_cast<std::size_t>(spec_.microbatches * spec_.virtual_stages);
    caches_.resize(slots);
    act_in_.resize(slots);
    grad_in_.resize(slots);
    grad_out_.resize(slots);
    chunk_grads_.resize(chunks.size());
  }

  // One step on `inputs` and `targets` into `out`. The last step's buffers are reused: each
  // is written before it is read (a chunk's first backward overwrites its gradients), so a
  // step's values do not depend on the steps before it.
  void run(ConstMatrixRef<Scalar> inputs, ConstMatrixRef<Scalar> targets, RankResult<Scalar>& out,
           std::string_view label_suffix, const std::function<void()>& after_pass) {
    if (spec_.pp != layout_.config().pp ||
        chunks_.size() != static_cast<std::size_t>(spec_.virtual_stages) ||
        inputs.rows() % spec_.microbatches != 0) {
      throw UsageError(
          fmt::format("pipeline step: schedule {} for PP={} with {} chunks and {} rows",
                      spec_.describe(), layout_.config().pp, chunks_.size(), inputs.rows()));
    }
    inputs_.emplace(inputs);
    targets_.emplace(targets);
    out_ = &out;
    suffix_ = label_suffix;
    labels_.use_suffix(label_suffix);
    rows_ = inputs.rows() / spec_.microbatches;
    message_rows_ = sp_ ? split_.shard_rows(rows_) : rows_;
    hidden_ = inputs.cols();
    elements_ = inputs.rows() * inputs.cols();
    reclaim_gradients();
    started_.assign(chunks_.size(), false);
    const bool last_stage = stage_ == spec_.pp - 1;
    out.output_is_sequence_shard = sp_ && !last_stage && split_.tp > 1;
    out.output.resize(
        out.output_is_sequence_shard ? split_.shard_rows(inputs.rows()) : inputs.rows(), hidden_);
    out.loss = last_stage ? std::optional<Scalar>(Scalar(0)) : std::nullopt;
    run_schedule(after_pass);
  }

 private:
  // Every TP (or SP) call names its layer, pass and micro-batch in traces and reports:
  // "TP all_reduce of layer 2 forward, micro-batch 1".
  void name_layer_communication() {
    const std::string_view reduce = sp_ ? "SP reduce_scatter" : "TP all_reduce";
    label(hooks_.reduce_output, LabelKind::reduce_output, reduce, "forward");
    label(hooks_.reduce_input_grad, LabelKind::reduce_input_grad, reduce, "backward");
    label(hooks_.gather_input, LabelKind::gather_input, "SP all_gather", "forward");
    label(hooks_.gather_output_grad, LabelKind::gather_output_grad, "SP all_gather", "backward");
    record_compute_in_order();
  }
  // A compute event per layer and pass where the layer's matmuls start, so that a trace
  // shows each layer's compute before the TP collective that reduces its result (forward:
  // the matmuls, then the all_reduce or reduce_scatter; backward likewise) and after the SP
  // all_gather that brings its input. dense_forward calls enter_layer just before a layer's
  // matmuls; dense_backward calls it before gather_output_grad (every layer but the
  // chunk's last, when the hook is set), which then comes just before the matmuls.
  void record_compute_in_order() {
    const bool gathers = static_cast<bool>(hooks_.gather_output_grad);
    hooks_.enter_layer = [this, gathers](std::size_t layer) {
      layer_ = layer_base_ + layer;
      const bool gather_next = pass_ == PassKind::backward && gathers &&
                               layer + 1 < chunks_[static_cast<std::size_t>(chunk_)].size();
      if (!gather_next) record_compute(layer);
    };
    if (!gathers) return;
    hooks_.gather_output_grad = [this, inner = std::move(hooks_.gather_output_grad)](
                                    Matrix<Scalar>& values, Communicator::Where where) {
      inner(values, where);
      record_compute(layer_ - layer_base_);
    };
  }
  void label(MatrixHook<Scalar>& hook, int kind, std::string_view what, std::string_view pass) {
    if (!hook) return;
    hook = [this, inner = std::move(hook), kind, what, pass](Matrix<Scalar>& values,
                                                             Communicator::Where where) {
      const std::string& text =
          labels_.get({kind, static_cast<int>(layer_), microbatch_, 0}, [&] {
            return fmt::format("{} of layer {} {}, micro-batch {}{}", what, layer_, pass,
                               microbatch_, suffix_);
          });
      const auto scope = layout_.tensor_parallel().annotate(text);
      inner(values, where);
    };
  }
  // The pass now running: its kind, micro-batch, chunk and the model index of its chunk's
  // first layer.
  void enter_pass(PassKind kind, int m, int c) {
    pass_ = kind;
    microbatch_ = m;
    chunk_ = c;
    layer_base_ = static_cast<std::size_t>(spec_.virtual_stage(stage_, c)) *
                  chunks_[static_cast<std::size_t>(c)].size();
  }

  std::size_t slot(int m, int c) const {
    return static_cast<std::size_t>(m * spec_.virtual_stages + c);
  }

  // Full rows of a stage-edge tensor: under sp the shard is gathered (into `gathered_`), the
  // all_gather recorded at the caller's line (forward's or backward's).
  ConstMatrixRef<Scalar> full_rows(const Matrix<Scalar>& edge,
                                   Communicator::Where where = Communicator::Where::current()) {
    if (!sp_) return edge;
    all_gather_sequence<Scalar>(layout_.tensor_parallel(), split_, edge, gathered_,
                                device_.memory(), where);
    return gathered_;
  }

  // The compute event of layer `layer` (in its chunk) of the pass now running (the trace's,
  // FORMAT.md 1.2). FLOPs of the rank's shard: a layer's two matmuls, rows x H x I each, 2
  // FLOPs per multiply-add; a backward twice that (input and weight gradients).
  void record_compute(std::size_t layer) {
    Communicator& comm = layout_.tensor_parallel();  // any of the rank's: compute is the rank's
    const LayerParams<Scalar>& params = chunks_[static_cast<std::size_t>(chunk_)][layer];
    const bool forward = pass_ == PassKind::forward;
    const double flops = 4.0 * static_cast<double>(rows_) * static_cast<double>(params.hidden()) *
                         static_cast<double>(params.inter()) * (forward ? 1 : 2);
    comm.compute({.label = forward ? "forward" : "backward",
                  .layer = static_cast<int>(layer_base_ + layer),
                  .microbatch = microbatch_,
                  .chunk = chunk_,
                  .flops = flops});
  }

  void forward(int m, int c) {
    enter_pass(PassKind::forward, m, c);
    const auto scope = layout_.pipeline_parallel().annotate(labels_.get(
        {LabelKind::forward_pass, m, c, 0},
        [&] { return fmt::format("forward of micro-batch {} chunk {}{}", m, c, suffix_); }));
    const int k = spec_.virtual_stage(stage_, c);
    StackCache<Scalar>& cache = caches_[slot(m, c)];
    const auto& layers = chunks_[static_cast<std::size_t>(c)];
    if (k == 0) {
      dense_forward<Scalar>(layers, inputs_->middleRows(m * rows_, rows_), cache, hooks_, device_);
    } else {
      // With PP = 1 the previous virtual stage is this stage's previous chunk.
      const Matrix<Scalar>& edge =
          spec_.stage_of(k - 1) == stage_ ? caches_[slot(m, c - 1)].output : act_in_[slot(m, c)];
      dense_forward<Scalar>(layers, full_rows(edge), cache, hooks_, device_);
    }
    if (k == spec_.virtual_count() - 1) {
      // The model output: micro-batch m's share of the loss, and its output gradient.
      const ConstMatrixRef<Scalar> y = full_rows(cache.output);
      const auto target = targets_->middleRows(m * rows_, rows_);
      *out_->loss += device_.mse_loss_part(y, target, elements_);
      device_.mse_loss_grad_part(y, target, grad_in_[slot(m, c)], elements_);
      out_->output.middleRows(m * rows_, rows_) = y;
    } else if (c == spec_.virtual_stages - 1) {
      const std::int64_t rows = cache.output.rows();
      out_->output.middleRows(m * rows, rows) = cache.output;
    }
  }

  void backward(int m, int c) {
    enter_pass(PassKind::backward, m, c);
    const auto scope = layout_.pipeline_parallel().annotate(labels_.get(
        {LabelKind::backward_pass, m, c, 0},
        [&] { return fmt::format("backward of micro-batch {} chunk {}{}", m, c, suffix_); }));
    const int k = spec_.virtual_stage(stage_, c);
    const bool last = k == spec_.virtual_count() - 1;
    Matrix<Scalar>* dx = k == 0 ? nullptr : &grad_out_[slot(m, c)];
    const GradMode mode =
        started_[static_cast<std::size_t>(c)] ? GradMode::accumulate : GradMode::overwrite;
    started_[static_cast<std::size_t>(c)] = true;
    const auto& layers = chunks_[static_cast<std::size_t>(c)];
    auto& grads = chunk_grads_[static_cast<std::size_t>(c)];
    StackCache<Scalar>& cache = caches_[slot(m, c)];
    if (last) {
      dense_backward<Scalar>(layers, cache, grad_in_[slot(m, c)], grads, dx, mode, hooks_, device_);
      return;
    }
    const Matrix<Scalar>& edge =
        spec_.stage_of(k + 1) == stage_ ? grad_out_[slot(m, c + 1)] : grad_in_[slot(m, c)];
    dense_backward<Scalar>(layers, cache, full_rows(edge), grads, dx, mode, hooks_, device_);
  }

  // Posts every transfer, then waits for each in order.
  void exchange(const std::vector<Transfer>& transfers) {
    Communicator& pp = layout_.pipeline_parallel();
    works_.clear();
    for (const Transfer& t : transfers) {
      const std::size_t i = slot(t.microbatch, t.chunk);
      const int tag = tag_of(t.payload);
      const auto scope = pp.annotate(transfer_label(t));
      if (t.send) {
        const Matrix<Scalar>& m =
            t.payload == Payload::activation ? caches_[i].output : grad_out_[i];
        works_.push_back(pp.isend(device_buffer(m, device_.memory()), t.peer, tag));
      } else {
        Matrix<Scalar>& m = t.payload == Payload::activation ? act_in_[i] : grad_in_[i];
        m.resize(message_rows_, hidden_);
        works_.push_back(pp.irecv(device_buffer(m, device_.memory()), t.peer, tag));
      }
    }
    for (std::size_t j = 0; j < works_.size(); ++j) {
      works_[j].wait();
      const Transfer& t = transfers[j];
      const auto want = static_cast<std::size_t>(message_rows_ * hidden_);
      if (!t.send && works_[j].status().count != want) {
        // A shorter message is a pipeline bug, named here.
        throw UsageError(fmt::format("{}: expected {} elements from group rank {} (tag {}), got {}",
                                     pp.name(), want, t.peer, tag_of(t.payload),
                                     works_[j].status().count));
      }
    }
  }

  void run_schedule(const std::function<void()>& after_pass) {
    for (const Step& step : schedule_.stages.at(static_cast<std::size_t>(stage_))) {
      if (!step.compute) {
        exchange(step.transfers);
      } else if (step.pass.kind == PassKind::forward) {
        forward(step.pass.microbatch, step.pass.chunk);
      } else {
        backward(step.pass.microbatch, step.pass.chunk);
      }
      if (step.compute && after_pass) after_pass();
    }
    RankResult<Scalar>& out = *out_;
    out.grads.clear();
    for (std::vector<LayerGrads<Scalar>>& grads : chunk_grads_) {
      for (LayerGrads<Scalar>& g : grads) out.grads.push_back(std::move(g));
    }
    dp_labels_.use_suffix(suffix_);
    average_gradients(layout_.data_parallel(), out.grads, device_, suffix_, &dp_labels_);
  }

  // The gradients the last step handed out (out.grads, in chunk order) go back to their
  // chunks as storage for this step's, where the caller left them whole.
  void reclaim_gradients() {
    std::vector<LayerGrads<Scalar>>& given = out_->grads;
    std::size_t layers = 0;
    for (const auto& chunk : chunks_) layers += chunk.size();
    if (given.size() != layers) return;
    std::size_t k = 0;
    for (std::size_t c = 0; c < chunk_grads_.size(); ++c) {
      chunk_grads_[c].resize(chunks_[c].size());
      for (LayerGrads<Scalar>& g : chunk_grads_[c]) g = std::move(given[k++]);
    }
  }

  // What a label of labels_ names (the first number of its LabelCache::Key).
  enum LabelKind : int {
    reduce_output,
    reduce_input_grad,
    gather_input,
    gather_output_grad,
    forward_pass,
    backward_pass,
    transfer,
  };

  // "PP send of micro-batch 0 activation, chunk 0": the label of a transfer.
  const std::string& transfer_label(const Transfer& t) {
    const bool activation = t.payload == Payload::activation;
    return labels_.get(
        {LabelKind::transfer, (t.send ? 2 : 0) + (activation ? 1 : 0), t.microbatch, t.chunk},
        [&] {
          return fmt::format("PP {} of micro-batch {} {}, chunk {}{}", t.send ? "send" : "recv",
                             t.microbatch, activation ? "activation" : "gradient", t.chunk,
                             suffix_);
        });
  }

  ParallelLayout& layout_;
  const ModelDevice<Scalar>& device_;  // where every tensor below lives
  const Schedule& schedule_;
  const ScheduleSpec& spec_;
  int stage_;
  bool sp_;
  SequenceSplit split_;
  const std::vector<std::vector<LayerParams<Scalar>>>& chunks_;
  // The step now running's data and result (run()).
  std::optional<ConstMatrixRef<Scalar>> inputs_;
  std::optional<ConstMatrixRef<Scalar>> targets_;
  RankResult<Scalar>* out_ = nullptr;
  std::int64_t rows_ = 0;          // rows of a micro-batch
  std::int64_t message_rows_ = 0;  // rows of a message between stages (a shard under sp)
  std::int64_t hidden_ = 0;
  std::int64_t elements_ = 0;  // of the whole batch: the loss's denominator
  std::string_view suffix_;  // ends every label (", step 3" in a run of many steps)
  LabelCache labels_;        // the labels made so far (for steps with the same suffix)
  LabelCache dp_labels_;     // average_gradients' own
  StackHooks<Scalar> hooks_;
  PassKind pass_ = PassKind::forward;  // of the pass now running (labels, compute events)
  int microbatch_ = 0;
  int chunk_ = 0;
  std::size_t layer_base_ = 0;   // model index of its chunk's first layer
  std::size_t layer_ = 0;        // model index of the layer now running
  std::vector<StackCache<Scalar>> caches_;
  std::vector<Matrix<Scalar>> act_in_;    // received activations (a shard under sp)
  std::vector<Matrix<Scalar>> grad_in_;   // output gradients: received, or from the loss
  std::vector<Matrix<Scalar>> grad_out_;  // input gradients, to send or hand over
  std::vector<std::vector<LayerGrads<Scalar>>> chunk_grads_;
  std::vector<bool> started_;  // whether a chunk's gradients have been written
  Matrix<Scalar> gathered_;
  std::vector<Work> works_;
};

}  // namespace detail

template <typename Scalar>
PipelineStep<Scalar>::PipelineStep(ParallelLayout& layout, const Schedule& schedule,
                                   TpComm tp_comm, std::int64_t seq,
                                   const std::vector<std::vector<LayerParams<Scalar>>>& chunks,
                                   const ModelDevice<Scalar>& device)
    : runner_(std::make_unique<detail::StageRunner<Scalar>>(layout, schedule, tp_comm, seq, chunks,
                                                    device)) {}

template <typename Scalar>
PipelineStep<Scalar>::~PipelineStep() = default;

template <typename Scalar>
void PipelineStep<Scalar>::operator()(ConstMatrixRef<Scalar> inputs,
                                      ConstMatrixRef<Scalar> targets, RankResult<Scalar>& out,
                                      std::string_view label_suffix,
                                      const std::function<void()>& after_pass) {
  runner_->run(inputs, targets, out, label_suffix, after_pass);
}

template <typename Scalar>
void pipeline_step(ParallelLayout& layout, const Schedule& schedule, TpComm tp_comm,
                   std::int64_t seq, const std::vector<std::vector<LayerParams<Scalar>>>& chunks,
                   ConstMatrixRef<Scalar> inputs, ConstMatrixRef<Scalar> targets,
                   RankResult<Scalar>& out, const ModelDevice<Scalar>& device,
                   std::string_view label_suffix, const std::function<void()>& after_pass) {
  PipelineStep<Scalar>(layout, schedule, tp_comm, seq, chunks, device)(inputs, targets, out,
                                                                       label_suffix, after_pass);
}

#define RANKLAB_INSTANTIATE_PIPELINE(Scalar)                                                  \
  template class PipelineStep<Scalar>;                                                        \
  template void pipeline_step<Scalar>(ParallelLayout&, const Schedule&, TpComm, std::int64_t, \
                                      const std::vector<std::vector<LayerParams<Scalar>>>&,   \
                                      ConstMatrixRef<Scalar>, ConstMatrixRef<Scalar>,         \
                                      RankResult<Scalar>&, const ModelDevice<Scalar>&,        \
                                      std::string_view, const std::function<void()>&);

RANKLAB_INSTANTIATE_PIPELINE(float)
RANKLAB_INSTANTIATE_PIPELINE(double)

#undef RANKLAB_INSTANTIATE_PIPELINE

}  // namespace ranklab
