#include "cli/trace_input_flags.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <string_view>
#include <utility>

#include "cli/choice_flags.hpp"
#include "traces/rank_list.hpp"
#include "traces/enum_names.hpp"
#include "traces/error.hpp"
#include "traces/quote_input.hpp"
#include "traces/trace_input.hpp"

namespace ranklab::cli {

namespace {

const TraceFormat& parse_format_flag(std::string_view format) {
  const TraceFormat* parsed = find_trace_format(format);
  if (parsed == nullptr) {
    throw UsageError(fmt::format("unknown --format {}: expected {}",
                                 quote_input(std::string(format)), trace_format_names()));
  }
  return *parsed;
}

// "{ranklab,simgrid-ti,...}": --format's values in --help.
std::string format_choices() {
  std::vector<std::string_view> names;
  for (const TraceFormat& format : trace_formats()) names.push_back(format.name);
  return choices_text(names);
}

// "ranklab (JSON Lines), ... or nccl-log (...)": the formats of `stats_only`, described.
std::string described_formats(bool stats_only) {
  std::vector<std::string> described;
  for (const TraceFormat& format : trace_formats()) {
    if (format.stats_only != stats_only) continue;
    described.push_back(fmt::format("{} ({})", format.name, format.description));
  }
  return alternatives_text(std::vector<std::string_view>(described.begin(), described.end()));
}

}  // namespace

std::string format_help() {
  const std::string stats_only = described_formats(/*stats_only=*/true);
  return described_formats(/*stats_only=*/false) +
         (stats_only.empty() ? "" : "; with stats only, " + stats_only);
}

void add_format_flag(CLI::App& command, std::string& format) {
  command.add_option("--format", format, format_help())
      ->check(parsed_as(format_choices(), parse_format_flag))
      ->capture_default_str();
}

namespace {

/// What a Flight Recorder import left out or found missing (the header's config), on stderr:
/// a report that names a rank which merely had no dump should not surprise.
void log_fr_import(const Trace& trace) {
  const nlohmann::json& config = trace.header.config;
  const nlohmann::json& left = config.value("left_out", nlohmann::json::object());
  spdlog::info(
      "imported {} Flight Recorder dumps (version {}); left out: {} entries after a pending "
      "one on their group, {} older than every rank's ring buffer, {} completed messages "
      "whose partner is not in the other dump",
      config.value("dumps", 0), config.value("fr_version", "?"), left.value("after_pending", 0),
      left.value("before_window", 0), left.value("unmatched_completed", 0));
  const std::vector<int> without = config.value("ranks_without_dump", std::vector<int>{});
  if (!without.empty()) {
    spdlog::warn("{} of the world {} no dump: {} with no operations",
                 detail::ranks_text(without), without.size() == 1 ? "has" : "have",
                 without.size() == 1 ? "it replays" : "they replay");
  }
}

/// What an NCCL log import found, on stderr: a report naming a rank that merely had no log
/// should not surprise.
void log_nccl_import(const Trace& trace) {
  const nlohmann::json& config = trace.header.config;
  spdlog::info("imported {} NCCL logs (NCCL {} strings): {} processes, {} communicators, {} "
               "other lines skipped",
               config.value("logs", 0), config.value("nccl_format", "?"),
               config.value("processes", 0), config.value("communicators", 0),
               config.value("skipped_lines", 0));
  const std::vector<int> without = config.value("ranks_without_log", std::vector<int>{});
  if (!without.empty()) {
    spdlog::warn("{} of the world {} no log: {} with no operations",
                 detail::ranks_text(without), without.size() == 1 ? "has" : "have",
                 without.size() == 1 ? "it replays" : "they replay");
  }
}

// What an import found, on stderr, for the formats whose reader leaves notes in the header.
constexpr std::pair<std::string_view, void (*)(const Trace&)> kImportLogs[] = {
    {"pytorch-fr", log_fr_import},
    {"nccl-log", log_nccl_import},
};

}  // namespace

Trace read_trace_input(const std::string& format, const std::vector<std::string>& paths) {
  const TraceFormat& parsed = parse_format_flag(format);
  Trace trace = ranklab::read_trace_input(parsed, {paths.begin(), paths.end()});
  for (const auto& [name, log_import] : kImportLogs) {
    if (name == parsed.name) log_import(trace);
  }
  return trace;
}

std::string input_name(const std::string& path, const std::vector<std::string>& more) {
  return more.empty() ? path : fmt::format("{} (+{} more)", path, more.size());
}

}  // namespace ranklab::cli
