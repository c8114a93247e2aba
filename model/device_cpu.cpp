// The CPU devices (model/device.hpp): `cpu` and `cpu-staged` run the same Eigen kernels
// (model/layer.hpp, called as they are); they differ only in their memory. cpu's is the
// host's, so upload and download hand the tensor over; cpu-staged's is its own, so every
// tensor crosses by a copy through its DeviceMemory, as a GPU's would.
#include <fmt/format.h>

#include <Eigen/Core>

#include "model/device.hpp"
#include "model/training.hpp"
#include "traces/error.hpp"

namespace ranklab {

// The CPU device's SGD kernel lives here, beside the device that runs it, so that the
// device does not depend on the training loop above it.
template <typename Scalar>
void sgd_update(std::span<Scalar> params, std::span<const Scalar> grads, Scalar lr) {
  if (params.size() != grads.size()) {
    throw UsageError(fmt::format("sgd_update: {} parameters, {} gradients", params.size(),
                                 grads.size()));
  }
  for (std::size_t i = 0; i < params.size(); ++i) params[i] -= lr * grads[i];
}

namespace {

template <typename Scalar>
class CpuDevice final : public ModelDevice<Scalar> {
 public:
  /// `memory` null: the cpu device; else cpu-staged's own memory.
  explicit CpuDevice(std::unique_ptr<DeviceMemory> memory) : memory_(std::move(memory)) {}

  DeviceId id() const override { return memory_ ? memory_->id() : DeviceId{}; }
  const DeviceMemory* memory() const override { return memory_.get(); }

  void layer_forward(const LayerParams<Scalar>& params, ConstMatrixRef<Scalar> x,
                     LayerCache<Scalar>& cache, Matrix<Scalar>& y) const override {
    ranklab::layer_forward<Scalar>(params, x, cache, y);
  }
  void add_output_bias(ConstVectorRef<Scalar> b2, Matrix<Scalar>& y) const override {
    ranklab::add_output_bias<Scalar>(b2, y);
  }
  void layer_backward(const LayerParams<Scalar>& params, ConstMatrixRef<Scalar> x,
                      LayerCache<Scalar>& cache, ConstMatrixRef<Scalar> dy,
                      LayerGrads<Scalar>& grads, MatrixPtr<Scalar> dx,
                      GradMode mode) const override {
    ranklab::layer_backward<Scalar>(params, x, cache, dy, grads, dx, mode);
  }
  Matrix<Scalar> gelu(ConstMatrixRef<Scalar> z) const override { return ranklab::gelu<Scalar>(z); }
  Matrix<Scalar> gelu_grad(ConstMatrixRef<Scalar> z) const override {
    return ranklab::gelu_grad<Scalar>(z);
  }
  Scalar mse_loss_part(ConstMatrixRef<Scalar> y, ConstMatrixRef<Scalar> target,
                       std::int64_t elements) const override {
    return ranklab::mse_loss_part<Scalar>(y, target, elements);
  }
  void mse_loss_grad_part(ConstMatrixRef<Scalar> y, ConstMatrixRef<Scalar> target,
                          Matrix<Scalar>& dy, std::int64_t elements) const override {
    ranklab::mse_loss_grad_part<Scalar>(y, target, dy, elements);
  }
  void divide(std::span<Scalar> values, Scalar divisor) const override {
    Eigen::Map<Vector<Scalar>>(values.data(), static_cast<Eigen::Index>(values.size())) /= divisor;
  }
  void sgd_update(std::span<Scalar> params, std::span<const Scalar> grads,
                  Scalar lr) const override {
    ranklab::sgd_update<Scalar>(params, grads, lr);
  }

  Matrix<Scalar> upload(Matrix<Scalar> host) const override { return cross(std::move(host), true); }
  Vector<Scalar> upload(Vector<Scalar> host) const override { return cross(std::move(host), true); }
  Matrix<Scalar> download(Matrix<Scalar> device) const override {
    return cross(std::move(device), false);
  }
  Vector<Scalar> download(Vector<Scalar> device) const override {
    return cross(std::move(device), false);
  }

 private:
  // A copy of `from` on the other side of the device's edge (none for cpu).
  template <typename Dense>
  Dense cross(Dense from, bool to_device) const {
    if (!memory_) return from;
    Dense to(from.rows(), from.cols());
    const std::size_t bytes = static_cast<std::size_t>(from.size()) * sizeof(Scalar);
    if (to_device) {
      memory_->copy_to_device(to.data(), from.data(), bytes);
    } else {
      memory_->copy_to_host(to.data(), from.data(), bytes);
    }
    return to;
  }

  std::unique_ptr<DeviceMemory> memory_;
};

}  // namespace

template <typename Scalar>
const ModelDevice<Scalar>& cpu_device() {
  static const CpuDevice<Scalar> device(nullptr);
  return device;
}

// No build has a CUDA device yet (cmake/cuda.cmake says why): `cuda` is refused by name.
bool cuda_built() { return false; }

void require_device_built(DeviceKind kind) {
  if (kind == DeviceKind::cuda && !cuda_built()) {
    throw UsageError(
        "--device cuda: this ranklab was built without CUDA (it has no CUDA device: see "
        "RANKLAB_CUDA in README.md)");
  }
}

template <typename Scalar>
std::unique_ptr<ModelDevice<Scalar>> make_model_device(DeviceId id) {
  require_device_built(id.kind);
  switch (id.kind) {
    case DeviceKind::cpu: return std::make_unique<CpuDevice<Scalar>>(nullptr);
    case DeviceKind::cpu_staged:
      return std::make_unique<CpuDevice<Scalar>>(std::make_unique<CpuStagedMemory>(id.index));
    case DeviceKind::cuda: break;
  }
  throw UsageError(fmt::format("unknown device kind {}", static_cast<int>(id.kind)));
}

template void sgd_update<float>(std::span<float>, std::span<const float>, float);
template void sgd_update<double>(std::span<double>, std::span<const double>, double);
template const ModelDevice<float>& cpu_device<float>();
template const ModelDevice<double>& cpu_device<double>();
template std::unique_ptr<ModelDevice<float>> make_model_device<float>(DeviceId);
template std::unique_ptr<ModelDevice<double>> make_model_device<double>(DeviceId);

}  // namespace ranklab
