#include "cli/explore_report.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <sstream>

#include "emulator/report_json.hpp"

namespace ranklab::cli {

namespace {

double rate(const ExploreReport& r) { return r.seconds > 0 ? r.executed / r.seconds : 0.0; }

}  // namespace

std::string ExploreReport::result() const {
  if (!failure) {
    return fmt::format(
        "ok: {} passed with the same results and per-rank traces as rank-order ({} in {:.2f} "
        "s, {:.0f} schedules/s)",
        plural(static_cast<std::size_t>(planned), "schedule"),
        plural(static_cast<std::size_t>(executed), "run"), seconds, rate(*this));
  }
  return fmt::format("{} at schedule {} of {} ({} in {:.2f} s, {:.0f} schedules/s)",
                     failure->verdict.kind, failure->schedule, planned,
                     plural(static_cast<std::size_t>(executed), "run"), seconds, rate(*this));
}

void print_text(std::ostream& out, const ExploreReport& r) {
  print_header(out, r);
  print_outcome(out, r);
}

void print_header(std::ostream& out, const ExploreReport& r) {
  fmt::print(out, "explore: {}: {} ({} after rank-order{}), {}\n", r.target,
             plural(static_cast<std::size_t>(r.planned), "schedule"), r.strategy,
             r.other_send_mode.empty()
                 ? std::string()
                 : fmt::format(", every other one under send mode {}", r.other_send_mode),
             plural(static_cast<std::size_t>(r.jobs), "job"));
}

void print_outcome(std::ostream& out, const ExploreReport& r) {
  if (r.failure) {
    const ExploreReport::Finding& f = *r.failure;
    fmt::print(out, "schedule {} of {} (--policy {}{}) failed: {}\n\n", f.schedule, r.planned,
               f.policy, f.send_mode.empty() ? "" : " --send-mode " + f.send_mode, f.verdict.why);
    // The failing run's report, indented so that its own result line reads as part of it.
    std::istringstream report(f.report);
    for (std::string line; std::getline(report, line);) {
      out << (line.empty() ? "" : "  ") << line << "\n";
    }
    out << "\nreproduce: " << f.reproduce << "\n";
    if (f.shrunk) {
      fmt::print(out, "shrunk: {} of rank order (from {}, in {}): {}\n",
                 plural(f.shrunk->preemptions, "preemption"), f.shrunk->preemptions_before,
                 plural(static_cast<std::size_t>(f.shrunk->runs), "run"), f.shrunk->reproduce);
    }
    if (!r.failing_trace.empty()) out << "trace of the failing schedule: " << r.failing_trace << "\n";
  }
  out << "result: " << r.result() << "\n";
}

nlohmann::ordered_json to_json(const ExploreReport& r) {
  nlohmann::ordered_json j = report_header(
      "explore", r.failure ? r.failure->verdict.kind : "ok", r.exit_code());
  j["result"] = r.result();
  j["target"] = r.target;
  j["strategy"] = r.strategy;
  j["other_send_mode"] =
      r.other_send_mode.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.other_send_mode);
  j["jobs"] = r.jobs;
  j["planned"] = r.planned;
  j["executed"] = r.executed;
  j["seconds"] = r.seconds;
  if (!r.failure) {
    j["failure"] = nullptr;
    return j;
  }
  const ExploreReport::Finding& f = *r.failure;
  nlohmann::ordered_json failure{{"schedule", f.schedule},
                                 {"policy", f.policy},
                                 {"send_mode", f.send_mode.empty() ? nlohmann::ordered_json(nullptr)
                                                                   : nlohmann::ordered_json(f.send_mode)},
                                 {"kind", f.verdict.kind},
                                 {"why", f.verdict.why},
                                 {"culprit_kind", f.verdict.culprit},
                                 {"reproduce", f.reproduce},
                                 {"shrunk", nullptr},
                                 {"report", f.report},
                                 {"run", f.run}};
  if (f.shrunk) {
    failure["shrunk"] = {{"preemptions", f.shrunk->preemptions},
                         {"preemptions_before", f.shrunk->preemptions_before},
                         {"runs", f.shrunk->runs},
                         {"reproduce", f.shrunk->reproduce}};
  }
  j["failure"] = std::move(failure);
  j["failing_trace"] = r.failing_trace;
  return j;
}

}  // namespace ranklab::cli
