// `ranklab export TRACE --perfetto OUT.json | --html OUT.html | --flight-recorder DIR`: the
// trace for a viewer (Chrome Trace Event JSON for ui.perfetto.dev, a self-contained HTML
// report that opens with the replay's verdict: cli/html_verdict.hpp) or for PyTorch's Flight
// Recorder analyzer (one dump per rank).
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <string>
#include <vector>

namespace ranklab::cli {

struct ExportFlags {
  std::string trace;
  std::vector<std::string> more_traces;  ///< pytorch-fr: further dump files or folders
  std::string format = "ranklab";
  std::string perfetto;  ///< empty: not asked for
  std::string html;      ///< empty: not asked for
  std::string flight_recorder;       ///< a folder for pickle dumps; empty: not asked for
  std::string flight_recorder_json;  ///< a folder for JSON dumps; empty: not asked for
  std::size_t max_events = 20'000;
  bool no_verdict = false;  ///< --no-verdict: the HTML report without replaying the trace
  /// Perfetto's viewer slows to a crawl past a few hundred thousand slices (a 1 M-event trace
  /// made a 388 MB file): big traces are cut to their earliest operations, and say so.
  std::size_t perfetto_max_events = 250'000;
};

/// Registers the subcommand; `flags` must outlive parsing.
CLI::App& add_export_command(CLI::App& app, ExportFlags& flags);

/// Writes the requested files and says so on stdout; returns the exit code.
int export_command(const ExportFlags& flags);

}  // namespace ranklab::cli
