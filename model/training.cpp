#include "model/training.hpp"

#include <fmt/format.h>

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "model/pipeline_step.hpp"
#include "model/schedule_builders.hpp"
#include "traces/error.hpp"

namespace ranklab {

namespace {

template <typename Dense>
void update_tensor(Dense& param, const Dense& grad, typename Dense::Scalar lr,
                   const ModelDevice<typename Dense::Scalar>& device) {
  using Scalar = typename Dense::Scalar;
  if (param.rows() != grad.rows() || param.cols() != grad.cols()) {
    throw UsageError(fmt::format("sgd_update: a [{}, {}] parameter with a [{}, {}] gradient",
                                 param.rows(), param.cols(), grad.rows(), grad.cols()));
  }
  device.sgd_update({param.data(), static_cast<std::size_t>(param.size())},
                    std::span<const Scalar>(grad.data(), static_cast<std::size_t>(grad.size())),
                    lr);
}

// The rank's tensors, on its device for the whole run: its shards and its replica's data
// go there once; what the observer and the caller see comes back.
template <typename Scalar>
class RankTrainer {
 public:
  RankTrainer(Communicator& world, const ParallelConfig& config, const Problem<Scalar>& problem,
              const StepOptions& options)
      : layout_(world, config),
        options_(options),
        seq_(problem.shape.seq),
        schedule_(build_schedule(options.schedule_spec(config.pp))),
        device_(make_model_device<Scalar>(world.device())) {
    const Coords& c = layout_.coords();
    if (c.d >= problem.replicas()) {
      throw UsageError(fmt::format("rank {} is DP replica {}, the problem has {} replicas",
                                   layout_.rank(), c.d, problem.replicas()));
    }
    const int v = options.virtual_stages;
    chunks_ = shard_stage<Scalar>(problem.layers, config, v, c);
    out_ = {.rank = layout_.rank(),
            .coords = c,
            .layers = stage_layer_indices(problem.shape.layers, config.pp, v, c.p)};
    const auto d = static_cast<std::size_t>(c.d);
    inputs_ = &problem.inputs[d];
    targets_ = &problem.targets[d];
    if (!on_host()) {  // on cpu nothing moves
      for (auto& chunk : chunks_) {
        for (LayerParams<Scalar>& layer : chunk) layer = upload(*device_, std::move(layer));
      }
      device_data_ = {device_->upload(*inputs_), device_->upload(*targets_)};
      inputs_ = &device_data_[0];
      targets_ = &device_data_[1];
    }
    pipeline_.emplace(layout_, schedule_, options.tp_comm, seq_, chunks_, *device_);
  }

  bool on_host() const { return device_->memory() == nullptr; }

  // `label_suffix` ends every communication label (", step 3"; empty: the seed's labels).
  void step(std::string_view label_suffix, const PassObserver& after_pass) {
    (*pipeline_)(*inputs_, *targets_, out_, label_suffix, after_pass);
  }

  // Every chunk's layers minus lr times their gradients (out_.grads is in chunk order).
  void update(Scalar lr) {
    std::size_t k = 0;
    for (auto& chunk : chunks_) {
      for (LayerParams<Scalar>& layer : chunk) sgd_update(layer, out_.grads[k++], lr, *device_);
    }
  }

  // The step's result and the rank's shards, as the host sees them.
  const RankResult<Scalar>& result() const { return out_; }
  RankResult<Scalar> downloaded_result() const {
    RankResult<Scalar> host = out_;
    host.output = device_->download(host.output);
    for (LayerGrads<Scalar>& grads : host.grads) grads = download(*device_, std::move(grads));
    return host;
  }
  std::vector<LayerParams<Scalar>> host_weights() const {
    std::vector<LayerParams<Scalar>> layers;
    for (const auto& chunk : chunks_) {
      for (const LayerParams<Scalar>& layer : chunk) {
        layers.push_back(on_host() ? layer : download(*device_, layer));
      }
    }
    return layers;
  }

  // The last result, moved out (downloaded first where the device has its own memory).
  RankResult<Scalar> take_result() {
    if (on_host()) return std::move(out_);
    out_.output = device_->download(std::move(out_.output));
    for (LayerGrads<Scalar>& grads : out_.grads) grads = download(*device_, std::move(grads));
    return std::move(out_);
  }

 private:
  ParallelLayout layout_;
  const StepOptions& options_;
  std::int64_t seq_;
  Schedule schedule_;
  std::unique_ptr<ModelDevice<Scalar>> device_;
  std::vector<std::vector<LayerParams<Scalar>>> chunks_;
  const Matrix<Scalar>* inputs_ = nullptr;   // the replica's, on the device
  const Matrix<Scalar>* targets_ = nullptr;
  std::array<Matrix<Scalar>, 2> device_data_;  // their copies, where the device has memory
  RankResult<Scalar> out_;
  std::optional<PipelineStep<Scalar>> pipeline_;  // its buffers kept from step to step
};

}  // namespace

template <typename Scalar>
void sgd_update(LayerParams<Scalar>& params, const LayerGrads<Scalar>& grads, Scalar lr,
                const ModelDevice<Scalar>& device) {
  update_tensor(params.w1, grads.w1, lr, device);
  update_tensor(params.b1, grads.b1, lr, device);
  update_tensor(params.w2, grads.w2, lr, device);
  update_tensor(params.b2, grads.b2, lr, device);
}

template <typename Scalar>
RankResult<Scalar> run_training_rank(Communicator& world, const ParallelConfig& config,
                                     const Problem<Scalar>& problem, const StepOptions& options,
                                     const TrainingOptions& training,
                                     const StepObserver<Scalar>& observe,
                                     const PassObserver& after_pass) {
  if (training.steps < 1) {
    throw UsageError(fmt::format("training: {} steps (at least 1)", training.steps));
  }
  config.validate(problem.shape);
  options.validate(config, problem.shape);
  RankTrainer<Scalar> trainer(world, config, problem, options);
  std::string suffix;
  for (int step = 0; step < training.steps; ++step) {
    // A run of many steps names each call's step in traces and reports.
    if (training.steps > 1) suffix = fmt::format(", step {}", step + 1);
    trainer.step(suffix, after_pass);
    if (training.lr) trainer.update(static_cast<Scalar>(*training.lr));
    if (observe) {
      const std::vector<LayerParams<Scalar>> updated =
          training.lr ? trainer.host_weights() : std::vector<LayerParams<Scalar>>{};
      if (trainer.on_host()) {
        observe(step, trainer.result(), updated);
      } else {
        observe(step, trainer.downloaded_result(), updated);
      }
    }
  }
  return trainer.take_result();
}

#define RANKLAB_INSTANTIATE_TRAINING(Scalar)                                                    \
  template void sgd_update<Scalar>(LayerParams<Scalar>&, const LayerGrads<Scalar>&, Scalar,     \
                                   const ModelDevice<Scalar>&);                                 \
  template RankResult<Scalar> run_training_rank<Scalar>(                                        \
      Communicator&, const ParallelConfig&, const Problem<Scalar>&, const StepOptions&,         \
      const TrainingOptions&, const StepObserver<Scalar>&, const PassObserver&);

RANKLAB_INSTANTIATE_TRAINING(float)
RANKLAB_INSTANTIATE_TRAINING(double)

#undef RANKLAB_INSTANTIATE_TRAINING

}  // namespace ranklab
