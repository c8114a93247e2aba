// One operation on a clock (the cost model's virtual time, or a trace's recorded times), in
// seconds: what traces/virtual_time.hpp computes and traces/wait_analysis.hpp reads.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace ranklab {

/// One operation on the clock, in seconds. end < 0: it never completed.
struct OperationTime {
  double post = -1;   ///< when the rank posted it (-1: never reached)
  double start = -1;  ///< when its transfer or collective began
  double end = -1;
  /// [start, end] of each compute event before it (ComputeWork::as_items order), and of
  /// each after it (the rank's last operation's compute_after).
  std::vector<std::pair<double, double>> compute;
  std::vector<std::pair<double, double>> compute_after;
};

/// A duration as people read it: "812 ns", "3.25 us", "1.200 ms", "2.5 s"; "0" for none.
std::string seconds_text(double seconds);

}  // namespace ranklab
