// What `ranklab replay` prints: the verdict on the recording, then the replayed run's own
// report (a deadlock's analysis, as `ranklab run` prints it).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iterator>

#include "emulator/replay.hpp"
#include "emulator/report_json.hpp"

namespace ranklab {
namespace {

double events_per_second(const ReplayReport& report) {
  const double seconds = std::chrono::duration<double>(report.elapsed).count();
  return seconds > 0 ? static_cast<double>(report.replayed_operations) / seconds : 0.0;
}

std::string verdict(const ReplayReport& report) {
  const std::size_t unfinished = report.unfinished_requests.size();
  if (report.reproduced()) {
    // "all 1 operation" and "and 0 messages" read oddly: the one operation, and messages
    // only where there were some.
    const std::string operations = report.recorded_operations == 1
                                       ? std::string("the 1 operation")
                                       : fmt::format("all {} operations", report.recorded_operations);
    const std::string messages =
        report.recorded_messages == 0
            ? std::string()
            : fmt::format(" and {}", plural(report.recorded_messages, "message"));
    return fmt::format("reproduced: {}{} as recorded{}", operations, messages,
                       unfinished == 0 ? ""
                                       : fmt::format(", but {} never completed",
                                                     plural(unfinished, "request")));
  }
  return fmt::format(
      "not reproduced: {} of {} differ or were never issued, on {} of {}{}",
      report.diverging_operations, plural(report.recorded_operations, "operation"),
      report.divergences.size(), plural(report.world_size, "rank"),
      report.hash_mismatches
          ? fmt::format("; {} recorded hash pairs disagree", report.hash_mismatches)
          : "");
}

std::string format_site(const CallSite& site) {
  std::string out = site.file.empty() ? std::string("?") : site.file;
  if (site.line != 0) out += fmt::format(":{}", site.line);
  if (!site.function.empty()) out += " in " + site.function;
  return out;
}

/// Where each rank stopped, with the recorded call sites; nothing when the trace has none.
void append_stops(std::string& out, const ReplayReport& report) {
  const bool any_site = std::any_of(report.stops.begin(), report.stops.end(),
                                    [](const ReplayStop& s) { return !s.site.empty(); });
  if (!any_site) return;
  auto it = std::back_inserter(out);
  if (!out.ends_with("\n\n")) out += "\n";
  out += "call sites (from the recording), where each rank stopped:\n";
  for (const ReplayStop& s : report.stops) {
    fmt::format_to(it, "  rank {} {} {}\n    at {}\n", s.rank,
                   s.in_progress ? "still in" : "last completed", s.call, format_site(s.site));
  }
  out += "\n";
}

}  // namespace

std::string format_replay(const ReplayReport& report, std::string_view name) {
  std::string out;
  auto it = std::back_inserter(out);
  fmt::format_to(it, "replay of {}: {}\n", name, plural(report.world_size, "rank"));
  fmt::format_to(it, "operations: {} of {} re-issued; {} differ or were never issued\n",
                 report.replayed_operations, report.recorded_operations,
                 report.diverging_operations);
  fmt::format_to(it, "messages: {} of {} matched the recorded send\n", report.reproduced_messages,
                 report.recorded_messages);
  fmt::format_to(it, "recorded hashes: {} with both hashes, {} disagree{}\n",
                 plural(report.hashes_checked, "message"), report.hash_mismatches,
                 report.first_hash_mismatch.empty() ? "" : " (" + report.first_hash_mismatch + ")");
  if (!report.wait_points) {
    out +=
        "note: the trace has no wait points (format 1.0): every operation was waited for "
        "before the next\n";
  }
  for (const std::string& note : report.recording_notes) out += "note: " + note + "\n";
  if (!report.unfinished_requests.empty()) {
    fmt::format_to(it, "\nrequests never completed ({}): the program finalized with them open\n",
                   report.unfinished_requests.size());
    for (const std::string& line : report.unfinished_requests) out += "  " + line + "\n";
  }
  if (!report.type_mismatches.empty()) {
    fmt::format_to(it, "\nmessages whose types differ ({}): as the recording gives both calls\n",
                   report.type_mismatches.size());
    for (const std::string& line : report.type_mismatches) out += "  " + line + "\n";
  }
  if (!report.divergences.empty()) {
    out += "\ndivergences (the first of each rank):\n";
    for (const ReplayDivergence& d : report.divergences) {
      fmt::format_to(it, "  rank {} op #{}\n    recorded: {}\n    replayed: {}\n", d.rank,
                     d.rank_seq, d.recorded, d.replayed);
      if (!d.fields.empty()) fmt::format_to(it, "    differs in: {}\n", fmt::join(d.fields, " "));
    }
  }
  if (!report.run.ok()) {
    if (const std::string analysis = render_analysis(report.run.analysis); !analysis.empty()) {
      out += "\n" + analysis + "\n";
    }
  }
  append_stops(out, report);
  // As a run's report ends: the bug the recorded pattern reaches, classified.
  if (const std::string culprit = culprit_line(report.run.culprit); !culprit.empty()) {
    out += culprit + "\n";
  }
  fmt::format_to(it, "time: {:.3f} ms for the replay ({:.0f} operations/s)\n",
                 std::chrono::duration<double, std::milli>(report.elapsed).count(),
                 events_per_second(report));
  fmt::format_to(it, "result: {}; run: {}\n", verdict(report), report.run.summary);
  return out;
}

nlohmann::ordered_json replay_to_json(const ReplayReport& report, std::string_view name) {
  nlohmann::ordered_json divergences = nlohmann::ordered_json::array();
  for (const ReplayDivergence& d : report.divergences) {
    divergences.push_back({{"rank", d.rank},
                           {"rank_seq", d.rank_seq},
                           {"recorded", d.recorded},
                           {"replayed", d.replayed},
                           {"fields", d.fields}});
  }
  nlohmann::ordered_json stops = nlohmann::ordered_json::array();
  for (const ReplayStop& s : report.stops) {
    stops.push_back({{"rank", s.rank},
                     {"rank_seq", s.rank_seq},
                     {"call", s.call},
                     {"in_progress", s.in_progress},
                     {"site",
                      {{"file", s.site.file}, {"line", s.site.line}, {"function", s.site.function}}}});
  }
  const int code = replay_exit_code(report);
  nlohmann::ordered_json j = report_header(
      "replay",
      !report.run.ok() ? to_string(report.run.status)
                       : (report.reproduced() ? "reproduced" : "not reproduced"),
      code);
  j["result"] = fmt::format("{}; run: {}", verdict(report), report.run.summary);
  j.update(nlohmann::ordered_json{
      {"trace", name},
      {"world_size", report.world_size},
      {"reproduced", report.reproduced()},
      {"recorded_operations", report.recorded_operations},
      {"replayed_operations", report.replayed_operations},
      {"diverging_operations", report.diverging_operations},
      {"recorded_messages", report.recorded_messages},
      {"reproduced_messages", report.reproduced_messages},
      {"hashes_checked", report.hashes_checked},
      {"hash_mismatches", report.hash_mismatches},
      {"wait_points", report.wait_points},
      {"unfinished_requests", report.unfinished_requests},
      {"divergences", divergences},
      {"stops", stops},
      {"elapsed_ms", std::chrono::duration<double, std::milli>(report.elapsed).count()},
      {"operations_per_second", events_per_second(report)}});
  // Only where there are some: every other replay's --json stays as it was.
  if (!report.type_mismatches.empty()) j["type_mismatches"] = report.type_mismatches;
  if (!report.recording_notes.empty()) j["notes"] = report.recording_notes;
  j.update(run_report_json(report.run));
  return j;
}

int replay_exit_code(const ReplayReport& report) {
  if (!report.run.ok()) return exit_code(report.run.status);
  return report.reproduced() ? 0 : kExitNotReproduced;
}

}  // namespace ranklab
