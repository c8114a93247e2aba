// A schedule as a text file, so that a user can dump a built-in schedule, edit it (or write
// one by hand) and have the validator check it: `ranklab schedule ... --save FILE`, then
// `ranklab schedule --file FILE`. One header line, then one line per step, in each stage's
// order (the stages' lines may interleave); `#` starts a comment:
//
//   schedule 1f1b pp 2 microbatches 2 virtual-stages 1
//   stage 0: F m0
//   stage 0: send act m0 -> 1
//   stage 1: recv act m0 <- 0
//   stage 0: send act m1 -> 1, recv grad m0 <- 1
//
// A step reads as describe(Step) writes it: "F m3" or "B m3 c1" (c only when V > 1), or
// transfers "send|recv act|grad mM [cC] ->|<- PEER" joined by ", " (posted together).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "model/schedule.hpp"

namespace ranklab {

/// The text of `schedule`, header first, then stage 0's steps, stage 1's, ...
std::string format_schedule(const Schedule& schedule);

/// Parses `text` (named `source` in errors). Throws UsageError "SOURCE:LINE: reason" for a
/// missing or bad header, a bad step, or a stage outside [0, PP). The result is not
/// validated: model/schedule_validator.hpp does that.
Schedule parse_schedule(std::string_view text, const std::string& source);

/// Reads and parses a file; throws UsageError naming the path if it cannot be read.
Schedule read_schedule_file(const std::filesystem::path& path);

/// Writes format_schedule(schedule) to `path`; throws TraceError naming it if it cannot.
void write_schedule_file(const std::filesystem::path& path, const Schedule& schedule);

}  // namespace ranklab
