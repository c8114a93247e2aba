// The rank's device as the model sees it (issue 13): where its tensors live and where the
// math of a layer runs. The TP/PP/DP code (dense_model, pipeline_step, tensor_, sequence_
// and data_parallel) is one implementation for every device: it calls the kernels below
// and hands the Communicator buffers that name the device's memory (device_buffer), which
// the Communicator stages through host memory (collectives/staging.hpp).
//
// Weights, inputs and targets start on the host and go to the device once (upload); the
// stage's output and gradients come back once at the end (download), which is what --save
// writes. The CPU devices keep tensors as Eigen matrices: `cpu` (the default) in the host
// memory the fabric reads, `cpu-staged` in memory of its own that only staging copies
// cross, both running the Eigen kernels of model/layer.hpp, so the two give the same bits.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "comm/buffer.hpp"
#include "comm/device.hpp"
#include "model/layer.hpp"

namespace ranklab {

/// The kernels a device runs and the copies across its edge. One per rank.
template <typename Scalar>
class ModelDevice {
 public:
  virtual ~ModelDevice() = default;

  virtual DeviceId id() const = 0;
  /// The memory communication buffers are in; null: host memory (nothing is staged).
  virtual const DeviceMemory* memory() const = 0;

  // The layer's kernels, with model/layer.hpp's contracts.
  virtual void layer_forward(const LayerParams<Scalar>& params, ConstMatrixRef<Scalar> x,
                             LayerCache<Scalar>& cache, Matrix<Scalar>& y) const = 0;
  virtual void add_output_bias(ConstVectorRef<Scalar> b2, Matrix<Scalar>& y) const = 0;
  virtual void layer_backward(const LayerParams<Scalar>& params, ConstMatrixRef<Scalar> x,
                              LayerCache<Scalar>& cache, ConstMatrixRef<Scalar> dy,
                              LayerGrads<Scalar>& grads, MatrixPtr<Scalar> dx,
                              GradMode mode) const = 0;
  virtual Matrix<Scalar> gelu(ConstMatrixRef<Scalar> z) const = 0;
  virtual Matrix<Scalar> gelu_grad(ConstMatrixRef<Scalar> z) const = 0;
  virtual Scalar mse_loss_part(ConstMatrixRef<Scalar> y, ConstMatrixRef<Scalar> target,
                               std::int64_t elements) const = 0;
  virtual void mse_loss_grad_part(ConstMatrixRef<Scalar> y, ConstMatrixRef<Scalar> target,
                                  Matrix<Scalar>& dy, std::int64_t elements) const = 0;
  /// values /= divisor, elementwise (the DP average).
  virtual void divide(std::span<Scalar> values, Scalar divisor) const = 0;
  /// params -= lr * grads, elementwise (SGD, model/training.hpp).
  virtual void sgd_update(std::span<Scalar> params, std::span<const Scalar> grads,
                          Scalar lr) const = 0;

  /// Host -> device: the device's copy of `host` (for cpu, `host` itself).
  virtual Matrix<Scalar> upload(Matrix<Scalar> host) const = 0;
  virtual Vector<Scalar> upload(Vector<Scalar> host) const = 0;
  /// Device -> host: the host's copy of `device` (for cpu, `device` itself).
  virtual Matrix<Scalar> download(Matrix<Scalar> device) const = 0;
  virtual Vector<Scalar> download(Vector<Scalar> device) const = 0;
};

/// The `cpu` device: host memory, model/layer.hpp's Eigen kernels. The default everywhere.
template <typename Scalar>
const ModelDevice<Scalar>& cpu_device();

/// The device for `id`: cpu, cpu-staged (its own memory), or cuda (a CUDA build only).
/// Throws UsageError for cuda on a build without CUDA, naming it.
template <typename Scalar>
std::unique_ptr<ModelDevice<Scalar>> make_model_device(DeviceId id);

/// Whether this build can make `cuda` devices (none can yet: cmake/cuda.cmake).
bool cuda_built();
/// Throws UsageError, one line naming it, if this build cannot make devices of `kind`.
void require_device_built(DeviceKind kind);

/// The communication buffer of a tensor on `device` (matrix or vector).
template <typename Dense>
MutableBuffer device_buffer(Dense& values, const DeviceMemory* device) {
  using Scalar = typename Dense::Scalar;
  return {values.data(), static_cast<std::size_t>(values.size()), data_type_of<Scalar>(), device};
}
template <typename Dense>
ConstBuffer device_buffer(const Dense& values, const DeviceMemory* device) {
  using Scalar = typename Dense::Scalar;
  return {values.data(), static_cast<std::size_t>(values.size()), data_type_of<Scalar>(), device};
}

/// A layer's four tensors uploaded to (or downloaded from) `device`.
template <typename Scalar>
LayerParams<Scalar> upload(const ModelDevice<Scalar>& device, LayerParams<Scalar> layer) {
  return {device.upload(std::move(layer.w1)), device.upload(std::move(layer.b1)),
          device.upload(std::move(layer.w2)), device.upload(std::move(layer.b2))};
}
template <typename Scalar>
LayerParams<Scalar> download(const ModelDevice<Scalar>& device, LayerParams<Scalar> layer) {
  return {device.download(std::move(layer.w1)), device.download(std::move(layer.b1)),
          device.download(std::move(layer.w2)), device.download(std::move(layer.b2))};
}

}  // namespace ranklab
