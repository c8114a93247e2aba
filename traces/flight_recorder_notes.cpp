#include "traces/flight_recorder_notes.hpp"

#include "traces/late_arrivals.hpp"

namespace ranklab {
namespace {

bool is_fr_import(const Trace& trace) {
  return trace.header.config.value("program", "") == "pytorch-fr";
}

/// Dumps that ranklab wrote come from one clock (a run's virtual time); a job's from its hosts'.
bool one_clock(const Trace& trace) {
  const nlohmann::json& time = trace.header.config.value("time", nlohmann::json());
  return time.is_object() && time.value("one_clock", false);
}

}  // namespace

std::string format_flight_recorder_notes(const Trace& trace) {
  if (!is_fr_import(trace)) return "";
  std::string out = "\nfrom the recording (Flight Recorder):\n";
  for (const std::string& line : describe_arrivals(check_arrivals(trace, one_clock(trace)), trace.header)) {
    out += line + "\n";
  }
  out += std::string("  ") + kFrUnrecorded + "\n";
  return out;
}

nlohmann::json flight_recorder_notes_json(const Trace& trace) {
  if (!is_fr_import(trace)) return nullptr;
  const ArrivalCheck check = check_arrivals(trace, one_clock(trace));
  nlohmann::json late = nlohmann::json::array();
  for (const LateArrival& a : check.late) {
    late.push_back({{"rank", a.rank},
                    {"op", to_string(a.op)},
                    {"group", trace.header.groups.at(a.group).name},
                    {"coll_seq", a.coll_seq},
                    {"late_by_ns", a.late_by_ns}});
  }
  return {{"timed", check.timed},
          {"one_clock", check.one_clock},
          {"collectives_compared", check.compared},
          {"clock_spread_ns", check.clock_spread_ns < 0 ? nlohmann::json() : nlohmann::json(check.clock_spread_ns)},
          {"threshold_ns", check.threshold_ns},
          {"late_arrivals", late},
          {"unrecorded", {"reduce_op", "root", "tag", "split_sizes"}},
          {"lines", describe_arrivals(check, trace.header)}};
}

}  // namespace ranklab
