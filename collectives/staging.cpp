#include "collectives/staging.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "collectives/algorithms/algorithm.hpp"
#include "comm/device.hpp"
#include "comm/errors.hpp"

namespace ranklab {
namespace {

void record_copy(Backend& backend, StagingCopy copy, std::size_t bytes, const DeviceMemory& memory) {
  backend.compute({.label = "staging",
                   .copy = copy,
                   .bytes = static_cast<std::uint64_t>(bytes),
                   .device = memory.id().name()});
}

const std::byte* bytes_of(const void* p) { return static_cast<const std::byte*>(p); }

class StagedWork final : public detail::WorkImpl {
 public:
  StagedWork(Work inner, HostStaging staging, bool receive)
      : staging_(std::move(staging)), inner_(std::move(inner)), receive_(receive) {}

  void wait() override {
    inner_.wait();
    complete();
  }
  bool wait_for(std::chrono::milliseconds timeout) override {
    if (!inner_.wait_for(timeout)) return false;
    complete();
    return true;
  }
  bool test() override {
    if (!inner_.test()) return false;
    complete();
    return true;
  }
  RecvStatus status() const override { return inner_.status(); }

 private:
  void complete() {
    if (receive_) {
      staging_.finish(inner_.status().count);
    } else {
      staging_.finish();
    }
  }

  // The host buffers outlive the backend's handle: a dropped handle is destroyed first.
  HostStaging staging_;
  Work inner_;
  bool receive_;
};

}  // namespace

HostStaging::HostStaging(Backend& backend, ConstBuffer input, MutableBuffer output)
    : backend_(&backend), input_(input), output_(output) {
  RANKLAB_CHECK(input.device == nullptr || output.device == nullptr ||
                    input.device == output.device,
                "a call's input and output are on different devices ({} and {})",
                input.device->id().name(), output.device->id().name());
  if (input.device != nullptr && input.device == output.device && input.count != 0 &&
      output.count != 0 && overlaps(input.data, input.bytes(), output.data, output.bytes())) {
    // In place, or one a block of the other: one host buffer over both, staged once each
    // way, so the call stays in place on the host.
    const std::byte* in = bytes_of(input.data);
    const std::byte* out = bytes_of(output.data);
    const std::byte* first = std::min(in, out);
    const std::byte* end = std::max(in + input.bytes(), out + output.bytes());
    host_.resize(static_cast<std::size_t>(end - first));
    input.device->copy_to_host(host_.data(), first, host_.size());
    record_copy(backend, StagingCopy::to_host, host_.size(), *input.device);
    input_.data = host_.data() + (in - first);
    output_.data = host_.data() + (out - first);
    input_.device = output_.device = nullptr;
    device_output_ = output;
    return;
  }
  if (input.device != nullptr) {
    input_host_.resize(input.bytes());
    input.device->copy_to_host(input_host_.data(), input.data, input.bytes());
    record_copy(backend, StagingCopy::to_host, input.bytes(), *input.device);
    input_.data = input_host_.data();
    input_.device = nullptr;
  }
  if (output.device != nullptr) {
    host_.resize(output.bytes());
    output_.data = host_.data();
    output_.device = nullptr;
    device_output_ = output;
  }
}

void HostStaging::finish(std::size_t count) {
  if (finished_) return;
  finished_ = true;
  if (device_output_.device == nullptr) return;
  const std::size_t bytes = std::min(count, device_output_.count) * size_of(device_output_.dtype);
  device_output_.device->copy_to_device(device_output_.data, output_.data, bytes);
  record_copy(*backend_, StagingCopy::to_device, bytes, *device_output_.device);
}

Work staged_work(Work inner, HostStaging staging, bool receive) {
  return Work(std::make_unique<StagedWork>(std::move(inner), std::move(staging), receive));
}

}  // namespace ranklab
