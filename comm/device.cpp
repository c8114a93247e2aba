#include "comm/device.hpp"

#include <fmt/format.h>

#include <cstring>

#include "traces/error.hpp"

namespace ranklab {

std::string_view to_string(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::cpu: return "cpu";
    case DeviceKind::cpu_staged: return "cpu-staged";
    case DeviceKind::cuda: return "cuda";
  }
  return "?";
}

DeviceKind parse_device_kind(std::string_view text) {
  if (text == "cpu") return DeviceKind::cpu;
  if (text == "cpu-staged" || text == "cpu_staged") return DeviceKind::cpu_staged;
  if (text == "cuda") return DeviceKind::cuda;
  throw UsageError(fmt::format("unknown device '{}' (known: cpu, cpu-staged, cuda)", text));
}

std::string DeviceId::name() const {
  if (kind == DeviceKind::cpu) return "cpu";
  return fmt::format("{}:{}", to_string(kind), index);
}

void CpuStagedMemory::copy_to_host(void* to, const void* from, std::size_t bytes) const {
  if (bytes != 0) std::memcpy(to, from, bytes);
}

void CpuStagedMemory::copy_to_device(void* to, const void* from, std::size_t bytes) const {
  if (bytes != 0) std::memcpy(to, from, bytes);
}

}  // namespace ranklab
