#include "cli/diff_command.hpp"

#include <iostream>

#include "traces/diff.hpp"
#include "cli/trace_input_flags.hpp"
#include "emulator/report_json.hpp"

namespace ranklab::cli {

CLI::App& add_diff_command(CLI::App& app, DiffFlags& flags) {
  CLI::App& diff = *app.add_subcommand(
      "diff",
      "compare two traces rank by rank; print each rank's first divergence (exit 0 identical, "
      "2 different). Ignores lamport and the header's config (policy, seed, threads, ...)");
  diff.add_option("A", flags.a, "first trace (JSON Lines, or in the --format given)")->required();
  diff.add_option("B", flags.b,
                  "second trace, in the same format (with pytorch-fr or nccl-log: a folder of dumps or logs, or one)")
      ->required();
  add_format_flag(diff, flags.format);
  diff.add_flag("--json", flags.json, "print the report as JSON instead of text (docs/json.md)");
  return diff;
}

int diff_command(const DiffFlags& flags) {
  // JSON Lines are compared as they are read; other formats are imported whole.
  const TraceDiff diff = flags.format == "ranklab"
                             ? diff_trace_files(flags.a, flags.b)
                             : diff_traces(read_trace_input(flags.format, {flags.a}),
                                           read_trace_input(flags.format, {flags.b}));
  if (flags.json) {
    nlohmann::ordered_json doc = report_header(
        "diff", diff.identical() ? "identical" : "different",
        diff.identical() ? 0 : kExitDifferent);
    doc.update(nlohmann::ordered_json(diff_to_json(diff, flags.a, flags.b)));
    std::cout << doc.dump(2) << "\n";
  } else {
    std::cout << format_diff(diff, flags.a, flags.b);
  }
  return diff.identical() ? 0 : kExitDifferent;
}

}  // namespace ranklab::cli
