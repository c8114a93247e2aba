// Where a rank's tensors live (issue 13): every rank has a device, and a buffer says which
// device's memory it is in. Host memory (the `cpu` device) is what the fabric and MPI move;
// a buffer in a device's own memory is staged through host buffers by the Communicator
// (collectives/staging.hpp), device -> host before the call and host -> device after it, as
// Gloo stages CUDA tensors. `cpu-staged` is a CPU stand-in for such a device: its memory is
// ordinary RAM kept apart from the host buffers the fabric sees, so the whole staging path
// runs on any machine.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ranklab {

enum class DeviceKind {
  cpu,         ///< the default: tensors in host memory, nothing staged
  cpu_staged,  ///< CPU stand-in for a device whose memory the fabric cannot see
  cuda,        ///< an NVIDIA GPU (a build with CUDA; rank r on GPU r % count)
};

/// "cpu", "cpu-staged", "cuda".
std::string_view to_string(DeviceKind kind);
/// Parses the names above (also "cpu_staged"); throws UsageError naming the known ones.
DeviceKind parse_device_kind(std::string_view text);

/// One rank's device: its kind and ordinal (cpu-staged: the rank; cuda: the GPU).
struct DeviceId {
  DeviceKind kind = DeviceKind::cpu;
  int index = 0;

  /// "cpu", "cpu-staged:3", "cuda:0": what traces and reports call it.
  std::string name() const;
  /// Whether communication through this device stages through host buffers.
  bool staged() const { return kind != DeviceKind::cpu; }
  friend bool operator==(const DeviceId&, const DeviceId&) = default;
};

/// The memory of a staged device: what the Communicator needs to stage a buffer in it.
/// A buffer whose `device` is null is host memory.
class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  virtual DeviceId id() const = 0;
  /// Device -> host: `bytes` from device memory `from` into host memory `to`.
  virtual void copy_to_host(void* to, const void* from, std::size_t bytes) const = 0;
  /// Host -> device: `bytes` from host memory `from` into device memory `to`.
  virtual void copy_to_device(void* to, const void* from, std::size_t bytes) const = 0;
};

/// cpu-staged's memory: plain RAM, copied with memcpy; `index` names it (the rank).
class CpuStagedMemory final : public DeviceMemory {
 public:
  explicit CpuStagedMemory(int index) : id_{DeviceKind::cpu_staged, index} {}
  DeviceId id() const override { return id_; }
  void copy_to_host(void* to, const void* from, std::size_t bytes) const override;
  void copy_to_device(void* to, const void* from, std::size_t bytes) const override;

 private:
  DeviceId id_;
};

}  // namespace ranklab
