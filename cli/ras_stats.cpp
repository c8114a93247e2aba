#include "cli/ras_stats.hpp"

#include <iostream>

#include "cli/trace_input_flags.hpp"
#include "emulator/report_json.hpp"
#include "traces/nccl_ras_verdict.hpp"

namespace ranklab::cli {

int ras_stats(const std::vector<std::string>& paths, bool json) {
  const std::vector<RasSnapshot> snapshots = read_nccl_ras({paths.begin(), paths.end()});
  const RasVerdict verdict = judge_ras(snapshots);
  const std::string name = input_name(paths.front(), {paths.begin() + 1, paths.end()});
  if (json) {
    nlohmann::ordered_json out = report_header("stats", "ok", 0);
    out["trace"] = name;
    out.update(ras_verdict_to_json(verdict, snapshots));
    std::cout << out.dump(2) << "\n";
  } else {
    std::cout << format_ras_verdict(verdict, snapshots, name);
  }
  return 0;
}

}  // namespace ranklab::cli
