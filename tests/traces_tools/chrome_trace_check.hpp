// Checks a Chrome Trace Event Format document against the format's rules, as the
// Perfetto export tests need them: every event has ph, ts, pid, tid and name; complete
// events have a non-negative dur; every flow start has exactly one finish with the same
// id, category and name, no earlier than the start. ranklab's message arrows ("msg S:Q")
// must also leave from inside their send's slice and land on their receive's completion
// (the last nanosecond of its slice), never before they left.
#pragma once

#include <map>
#include <utility>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

namespace ranklab::tools_testing {

/// Problems found, one line each; empty when the document follows the rules.
inline std::vector<std::string> chrome_trace_problems(const nlohmann::json& doc) {
  std::vector<std::string> problems;
  if (!doc.is_object() || !doc.contains("traceEvents") || !doc["traceEvents"].is_array()) {
    return {"no traceEvents array"};
  }
  using FlowKey = std::tuple<std::string, std::string, nlohmann::json>;  // cat, name, id
  std::map<FlowKey, std::vector<double>> starts, finishes;
  std::size_t index = 0;
  for (const nlohmann::json& event : doc["traceEvents"]) {
    const std::string where = "event " + std::to_string(index++) + " " + event.dump();
    for (const char* key : {"ph", "ts", "pid", "tid", "name"}) {
      if (!event.contains(key)) problems.push_back(where + ": no '" + key + "'");
    }
    if (!event.value("ts", nlohmann::json()).is_number()) problems.push_back(where + ": ts");
    const std::string ph = event.value("ph", "");
    if (ph == "X" &&
        !(event.contains("dur") && event["dur"].is_number() && event["dur"].get<double>() >= 0)) {
      problems.push_back(where + ": complete event needs dur >= 0");
    }
    if (ph == "s" || ph == "f") {
      if (!event.contains("id")) problems.push_back(where + ": flow without id");
      const FlowKey key{event.value("cat", ""), event.value("name", ""),
                        event.value("id", nlohmann::json())};
      (ph == "s" ? starts : finishes)[key].push_back(event.value("ts", 0.0));
    }
  }
  for (const auto& [key, times] : starts) {
    const auto it = finishes.find(key);
    if (times.size() != 1 || it == finishes.end() || it->second.size() != 1) {
      problems.push_back("flow " + std::get<2>(key).dump() + ": needs one start and one finish");
    } else if (it->second[0] < times[0]) {
      problems.push_back("flow " + std::get<2>(key).dump() + ": finishes before it starts");
    }
  }
  for (const auto& [key, times] : finishes) {
    if (!starts.contains(key))
      problems.push_back("flow " + std::get<2>(key).dump() + ": finish without start");
  }
  // Message arrows against their slices: [ts, ts + dur] of the send and the receive whose
  // args carry the message id.
  std::map<std::pair<std::string, std::string>, std::pair<double, double>> slices;  // op, msg
  for (const nlohmann::json& event : doc["traceEvents"]) {
    if (event.value("ph", "") != "X" || !event.contains("args") || !event["args"].is_object())
      continue;
    const nlohmann::json& args = event["args"];
    if (!args.contains("msg") || !args.contains("op")) continue;
    const double ts = event.value("ts", 0.0);
    slices[{args["op"].get<std::string>(), args["msg"].get<std::string>()}] = {
        ts, ts + event.value("dur", 0.0)};
  }
  constexpr double kSlack = 1e-6;  // µs
  for (const nlohmann::json& event : doc["traceEvents"]) {
    const std::string ph = event.value("ph", "");
    const std::string name = event.value("name", "");
    if ((ph != "s" && ph != "f") || event.value("cat", "") != "message" ||
        name.rfind("msg ", 0) != 0)
      continue;
    const std::string msg = name.substr(4);
    const auto it = slices.find({ph == "s" ? "send" : "recv", msg});
    if (it == slices.end()) {
      problems.push_back("flow " + name + ": no " + (ph == "s" ? "send" : "recv") + " slice");
      continue;
    }
    const auto [from, to] = it->second;
    const double ts = event.value("ts", 0.0);
    if (ts < from - kSlack || ts > to + kSlack) {
      problems.push_back("flow " + name + ": " + ph + " at " + std::to_string(ts) +
                         " is outside its slice [" + std::to_string(from) + ", " +
                         std::to_string(to) + "]");
    } else if (ph == "f" && ts < to - 1e-3 - kSlack) {
      problems.push_back("flow " + name + ": lands at " + std::to_string(ts) +
                         ", not on the receive's completion " + std::to_string(to));
    }
  }
  return problems;
}

}  // namespace ranklab::tools_testing
