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
  const bool shared = input.device != nullptr && input.device == output.device &&
                      input.count != 0 && output.count != 0 &&
                      overlaps(input.data, input.bytes(), output.data, output.bytes());
  if (output.device != nullptr) {
    device_output_ = output;
    output_host_.resize(output.bytes());
    output_.data = output_host_.data();
    output_.device = nullptr;
  }
  if (shared) {
    // In place (or the input a block of the output): one host buffer, staged whole.
    const std::byte* in = bytes_of(input.data);
    const std::byte* out = bytes_of(output.data);
    RANKLAB_CHECK(in >= out && in + input.bytes() <= out + output.bytes(),
                  "a staged call's input overlaps its output without lying inside it");
    output.device->copy_to_host(output_host_.data(), output.data, output.bytes());
    record_copy(backend, StagingCopy::to_host, output.bytes(), *output.device);
    input_.data = output_host_.data() + (in - out);
    input_.device = nullptr;
    return;
  }
  if (input.device != nullptr) {
    input_host_.resize(input.bytes());
    input.device->copy_to_host(input_host_.data(), input.data, input.bytes());
    record_copy(backend, StagingCopy::to_host, input.bytes(), *input.device);
    input_.data = input_host_.data();
    input_.device = nullptr;
  }
}

void HostStaging::finish(std::size_t count) {
  if (finished_) return;
  finished_ = true;
  if (device_output_.device == nullptr) return;
  const std::size_t bytes = std::min(count, device_output_.count) * size_of(device_output_.dtype);
  device_output_.device->copy_to_device(device_output_.data, output_host_.data(), bytes);
  record_copy(*backend_, StagingCopy::to_device, bytes, *device_output_.device);
}

Work staged_work(Work inner, HostStaging staging, bool receive) {
  return Work(std::make_unique<StagedWork>(std::move(inner), std::move(staging), receive));
}

}  // namespace ranklab
