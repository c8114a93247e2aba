#include "cli/trace_input_flags.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "traces/error.hpp"
#include "traces/trace_input.hpp"

namespace ranklab::cli {

void add_format_flag(CLI::App& command, std::string& format) {
  command.add_option("--format", format, kFormatHelp)->capture_default_str();
}

Trace read_trace_input(const std::string& format, const std::vector<std::string>& paths) {
  const std::optional<TraceFormat> parsed = parse_trace_format(format);
  if (!parsed) {
    throw UsageError(
        fmt::format("unknown --format '{}': expected {}", format, trace_format_names()));
  }
  return ranklab::read_trace_input(*parsed, {paths.begin(), paths.end()});
}

std::string input_name(const std::string& path, const std::vector<std::string>& more) {
  return more.empty() ? path : fmt::format("{} (+{} more)", path, more.size());
}

}  // namespace ranklab::cli
