// What a report of a Flight Recorder import adds to ranklab's own (issue 29 §2): the late
// arrivals the dumps' timestamps show (traces/late_arrivals.hpp), and the fields the format
// does not record, named as unknown rather than guessed. Empty for other traces.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "traces/event.hpp"

namespace ranklab {

/// The fields Flight Recorder does not record, and what replay assumes for them.
inline constexpr const char* kFrUnrecorded =
    "reduce op, root, tag and all_to_all split sizes are not in Flight Recorder dumps: unknown; "
    "replay assumes sum, group rank 0, tag 0 and even splits, so a mismatch in them cannot be "
    "seen";

/// The notes as report lines ("from the recording (Flight Recorder):\n  ...\n"), or "".
std::string format_flight_recorder_notes(const Trace& trace);

/// The same for --json: {"late_arrivals": [...], "clocks": ..., "unrecorded": ...}, or null.
nlohmann::json flight_recorder_notes_json(const Trace& trace);

}  // namespace ranklab
