// Staging of device buffers through host memory, as Gloo does for CUDA tensors (issue 13):
// a Communicator call whose buffers are in a device's memory (ConstBuffer::device) copies
// each input device -> host buffer once before the backend sees it, runs the call on host
// buffers (the fabric, MPI, any algorithm), and copies each output host buffer -> device
// once when the call has completed. Every copy is recorded as a staging event (a compute
// event with `copy`, traces/FORMAT.md 1.3) on the rank's trace, with its direction, bytes and
// device, so a cost model can time it on the PCIe link. Nothing is staged for host buffers:
// the default `cpu` device runs exactly as before.
#pragma once

#include <cstddef>
#include <vector>

#include "collectives/backend.hpp"
#include "collectives/work.hpp"
#include "comm/buffer.hpp"

namespace ranklab {

/// The host side of one call's device buffers. Input and output that overlap in one device
/// buffer (in place, or one a block of the other) share one host buffer over both, so the
/// call stays in place on the host.
class HostStaging {
 public:
  /// Copies `input` to a host buffer if it is on a device (a d2h staging event) and makes a
  /// host buffer for a device `output`. Throws UsageError if the two are on different
  /// devices.
  HostStaging(Backend& backend, ConstBuffer input, MutableBuffer output);
  HostStaging(HostStaging&&) noexcept = default;
  HostStaging(const HostStaging&) = delete;
  HostStaging& operator=(const HostStaging&) = delete;

  /// Whether either buffer is on a device (otherwise the call needs no staging).
  static bool needed(ConstBuffer input, MutableBuffer output) {
    return input.device != nullptr || output.device != nullptr;
  }

  /// What the backend is given: host buffers (the caller's own where they were host).
  ConstBuffer input() const { return input_; }
  MutableBuffer output() const { return output_; }

  /// The call has completed: copies the first `count` elements of the output back to the
  /// device (an h2d staging event), once; later calls do nothing.
  void finish(std::size_t count);
  void finish() { finish(output_.count); }

 private:
  Backend* backend_;
  MutableBuffer device_output_;  // the caller's output, when on a device
  std::vector<std::byte> input_host_;  // a device input apart from the output
  std::vector<std::byte> host_;        // the output's host buffer (with the input, in place)
  ConstBuffer input_;
  MutableBuffer output_;
  bool finished_ = false;
};

/// A Work whose completion (wait, or a test / wait_for that saw it done) ends the staging of
/// its call: the output copied back to the device. A receive copies what arrived.
Work staged_work(Work inner, HostStaging staging, bool receive);

}  // namespace ranklab
