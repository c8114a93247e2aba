#include "cli/export_command.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <iostream>

#include "traces/error.hpp"
#include "traces/export_flight_recorder.hpp"
#include "cli/html_verdict.hpp"
#include "traces/export_html.hpp"
#include "traces/export_perfetto.hpp"
#include "cli/trace_input_flags.hpp"
#include "traces/messages.hpp"

namespace ranklab::cli {

CLI::App& add_export_command(CLI::App& app, ExportFlags& flags) {
  CLI::App& command = *app.add_subcommand(
      "export",
      "write a trace for a viewer: Perfetto/Chrome JSON, a self-contained HTML report, or "
      "PyTorch Flight Recorder dumps");
  command.add_option("TRACE", flags.trace, "trace (JSON Lines, or in the --format given)")->required();
  command.add_option("MORE", flags.more_traces,
                     "with --format pytorch-fr or nccl-log: further dump or log files or folders");
  add_format_flag(command, flags.format);
  command.add_option("--perfetto", flags.perfetto,
                     "write Chrome Trace Event JSON here (open it in ui.perfetto.dev)");
  command.add_option("--html", flags.html, "write the HTML report here");
  command.add_option("--flight-recorder", flags.flight_recorder,
                     "write one PyTorch Flight Recorder dump per rank into this folder "
                     "(nccl_trace_rank_N, pickled as a timeout writes them), for "
                     "torch.distributed.flight_recorder.fr_trace");
  command.add_option("--flight-recorder-json", flags.flight_recorder_json,
                     "write the dumps in their JSON form (nccl_trace_rank_N.json, no frames) "
                     "into this folder, another than --flight-recorder's");
  command.add_flag("--no-verdict", flags.no_verdict,
                   "HTML report without the verdict (which replays the trace as `ranklab replay` "
                   "does: time and memory on a big trace)");
  command
      .add_option("--max-events", flags.max_events,
                  "operations drawn on the HTML timeline, earliest first (0: all)")
      ->capture_default_str();
  command
      .add_option("--perfetto-max-events", flags.perfetto_max_events,
                  "operations written to the Perfetto JSON, earliest on the timeline first (0: "
                  "all); a capped file says so on stdout and in its otherData")
      ->capture_default_str();
  return command;
}

int export_command(const ExportFlags& flags) {
  if (flags.perfetto.empty() && flags.html.empty() && flags.flight_recorder.empty() &&
      flags.flight_recorder_json.empty()) {
    throw UsageError(
        "export: say what to write: --perfetto OUT.json, --html OUT.html, --flight-recorder DIR "
        "or --flight-recorder-json DIR");
  }
  if (!flags.flight_recorder.empty() && !flags.flight_recorder_json.empty() &&
      std::filesystem::weakly_canonical(flags.flight_recorder) ==
          std::filesystem::weakly_canonical(flags.flight_recorder_json)) {
    throw UsageError(
        "export: --flight-recorder and --flight-recorder-json need two folders (PyTorch's "
        "analyzer reads every dump in a folder, and cannot read the JSON form)");
  }
  std::vector<std::string> paths = {flags.trace};
  paths.insert(paths.end(), flags.more_traces.begin(), flags.more_traces.end());
  const Trace trace = read_trace_input(flags.format, paths);
  // Arrows need both ends; a receive whose send line is gone is drawn without one.
  if (const auto dangling = link_messages(trace).dangling_receives; dangling > 0) {
    spdlog::warn("{}: {} receives name a send that is not in the trace; drawn without arrows",
                 flags.trace, dangling);
  }
  if (!flags.perfetto.empty()) {
    const PerfettoSummary written =
        write_perfetto_file(flags.perfetto, trace, {.max_events = flags.perfetto_max_events});
    std::cout << "perfetto: " << flags.perfetto << " (open it in https://ui.perfetto.dev)\n";
    if (written.capped()) {
      std::cout << fmt::format(
          "perfetto: capped: the earliest {} of {} operations are in the file "
          "(--perfetto-max-events 0 writes all)\n",
          written.written, written.operations);
    }
  }
  if (!flags.html.empty()) {
    HtmlReportOptions options{.title = std::filesystem::path(flags.trace).filename().string(),
                              .max_events = flags.max_events};
    if (!flags.no_verdict) {
      const std::string format = flags.format == "ranklab" ? "" : "--format " + flags.format + " ";
      options.verdict = diagnose_for_html(trace, format + fmt::format("{}", fmt::join(paths, " ")));
    }
    write_html_report_file(flags.html, trace, options);
    std::cout << "html: " << flags.html << "\n";
  }
  for (const auto& [folder, form] : {std::pair{flags.flight_recorder, FrDumpForm::pickle},
                                     std::pair{flags.flight_recorder_json, FrDumpForm::json}}) {
    if (folder.empty()) continue;
    const FrExportSummary written = write_flight_recorder_dumps(folder, trace, form);
    std::cout << fmt::format("flight-recorder{}: {} ({} dumps, {} entries{})\n",
                             form == FrDumpForm::json ? "-json" : "", folder, written.dumps,
                             written.entries,
                             form == FrDumpForm::pickle
                                 ? "; analyze with python -m torch.distributed.flight_recorder.fr_trace " + folder
                                 : "");
  }
  return 0;
}

}  // namespace ranklab::cli
