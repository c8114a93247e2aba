#include "emulator/report.hpp"

#include <fmt/format.h>

#include "traces/error.hpp"

namespace ranklab {

std::string culprit_line(const Culprit& culprit) {
  if (culprit.kind.empty()) return {};
  return fmt::format("culprit ({}): {}", culprit.kind, culprit.text);
}

int exit_code(RunStatus status) {
  switch (status) {
    case RunStatus::ok: return 0;
    case RunStatus::deadlock: return 3;
    case RunStatus::mismatch: return 4;
    case RunStatus::rank_failed: return 5;
    case RunStatus::unsafe: return 6;
  }
  return 5;
}

const char* to_string(RunStatus status) {
  switch (status) {
    case RunStatus::ok: return "ok";
    case RunStatus::deadlock: return "deadlock";
    case RunStatus::mismatch: return "mismatch";
    case RunStatus::rank_failed: return "rank failed";
    case RunStatus::unsafe: return "unsafe";
  }
  return "unknown";
}

void RunReport::rethrow_if_failed() const {
  if (root_cause) std::rethrow_exception(root_cause);
  if (status != RunStatus::ok) throw Error(summary);
}

}  // namespace ranklab
