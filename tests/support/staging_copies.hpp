// The staging copies (device <-> host) recorded among a rank's trace events, for the tests of
// the device path (collectives' staging, the model on its device).
#pragma once

#include <vector>

#include "traces/event.hpp"

namespace ranklab::testing {

inline std::vector<ComputeItem> staging_of(const std::vector<TraceEvent>& events) {
  std::vector<ComputeItem> out;
  for (const TraceEvent& e : events) {
    for (const ComputeWork* work : {&e.compute, &e.compute_after}) {
      for (const ComputeItem& item : work->items) {
        if (item.staging()) out.push_back(item);
      }
    }
  }
  return out;
}

}  // namespace ranklab::testing
