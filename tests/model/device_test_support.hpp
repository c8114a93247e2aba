// The devices the model tests run on (issue 13): cpu and cpu-staged always, cuda where the
// build has it; a test on a device this build cannot run skips with the reason.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "comm/device.hpp"
#include "model/device.hpp"

namespace ranklab::testing {

/// Every device kind: the tests parameterised over devices take each.
inline std::vector<DeviceKind> test_devices() {
  return {DeviceKind::cpu, DeviceKind::cpu_staged, DeviceKind::cuda};
}

/// "cpu", "cpustaged", "cuda": test-name safe.
inline std::string device_test_name(DeviceKind kind) {
  std::string name(to_string(kind));
  std::erase(name, '-');
  return name;
}

/// Why this build cannot run `kind`, or empty.
inline std::string device_unavailable(DeviceKind kind) {
  if (kind == DeviceKind::cuda && !cuda_built()) {
    return "--device cuda: this build has no CUDA device (cmake/cuda.cmake: RANKLAB_CUDA found "
           "no toolkit, or the CUDA device is not written yet)";
  }
  return {};
}

}  // namespace ranklab::testing

/// Skips the test, with the reason, when this build cannot run device `kind`.
#define RANKLAB_SKIP_UNLESS_DEVICE(kind)                                               \
  do {                                                                                 \
    if (const std::string why_ = ::ranklab::testing::device_unavailable(kind); !why_.empty()) \
      GTEST_SKIP() << why_;                                                            \
  } while (false)
