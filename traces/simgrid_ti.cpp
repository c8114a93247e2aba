// The SimGrid TI reader (format in simgrid_ti.hpp): a file, or an index listing one file per
// rank, imported in one pass, or two when buffered sends need a plan (Importer::run).
#include "traces/simgrid_ti.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "traces/detail/simgrid_ti_importer.hpp"
#include "traces/error.hpp"
#include "traces/input_file.hpp"
#include "traces/quote_input.hpp"
#include "traces/text.hpp"

namespace ranklab {
namespace detail::ti {

Trace Importer::run() {
  Importer first(files_);
  first.first_pass_ = true;
  Trace trace = first.import();
  if (!first.saw_buffered_) return trace;
  Importer second(files_);
  second.close_buffered_ = std::move(first.close_buffered_);
  return second.import();
}

Trace Importer::import() {
  const int world = world_size();
  TraceBuilder builder(world);
  ranks_.resize(static_cast<std::size_t>(world));
  builder_ = &builder;
  for (std::uint32_t f = 0; f < files_.size(); ++f) {
    for_each_line(files_[f].text, [&](std::uint32_t line, const auto& words) {
      where_ = {f, line};
      action(words);
    });
  }
  json_config_ = {{"program", "simgrid-ti"}, {"source", files_.front().name}};
  BuiltTrace built = builder.build(json_config_);
  unfinished_requests(built.trace);
  if (!unfinished_.empty()) built.trace.header.config["unfinished_requests"] = unfinished_;
  if (first_pass_ && saw_buffered_) plan_buffered(built.trace);
  settle(built);
  keep_receive_signatures(built.trace);
  if (!type_mismatches_.empty()) built.trace.header.config["type_mismatches"] = type_mismatches_;
  if (derived_actions_ > 0) {
    built.trace.header.config["notes"] = {fmt::format(
        "{} {} a derived datatype (SMPI writes -1 and the count, never the size; "
        "the first at {}:{}): each replays as its count of opaque 1-byte elements (shown as "
        "u8), equal only to a derived datatype, so the bytes it moves, and its time under "
        "--cost, are unknown",
        derived_actions_, derived_actions_ == 1 ? "action uses" : "actions use", files_[derived_first_.file].name,
        derived_first_.line)};
  }
  locate(built.trace);
  return std::move(built.trace);
}

void Importer::fail_at(Location at, const std::string& reason) const {
  throw TraceError(fmt::format("{}:{}: {}", files_[at.file].name, at.line, reason));
}

int Importer::world_size() {
  int largest = -1;
  for (std::uint32_t f = 0; f < files_.size(); ++f) {
    for_each_line(files_[f].text, [&](std::uint32_t line, const auto& words) {
      where_ = {f, line};
      const auto rank = parse_whole<std::int64_t>(words[0]);
      if (!rank || *rank < 0 || *rank >= kMaxTiRanks) {
        fail(fmt::format("expected 'RANK ACTION ...' with RANK in [0, {}), got {}", kMaxTiRanks,
                         quote_input(words[0])));
      }
      if (words.size() < 2) fail(fmt::format("rank {}: no action", *rank));
      largest = std::max(largest, static_cast<int>(*rank));
    });
  }
  if (largest < 0) {
    throw TraceError(
        fmt::format("{}: no actions (not a SimGrid time-independent trace)", files_.front().name));
  }
  return largest + 1;
}

}  // namespace detail::ti

namespace {

using detail::ti::for_each_line;
using detail::ti::Importer;
using detail::ti::TiFile;

/// A listed file's text; an error names the index line that listed it.
std::string read_listed_file(const std::filesystem::path& path, std::string_view cited_by) {
  try {
    return read_input_file(path, "listed file");
  } catch (const TraceError& error) {
    throw TraceError(fmt::format("{}: {}", cited_by, error.what()));
  }
}

/// An index lists files: its first line is not `RANK ACTION`.
bool is_index(std::string_view text) {
  bool index = false;
  bool decided = false;
  for_each_line(text, [&](std::uint32_t, const auto& words) {
    if (decided) return;
    decided = true;
    index = !parse_whole<std::int64_t>(words[0]) || words.size() < 2;
  });
  return index;
}

}  // namespace

Trace parse_simgrid_ti(std::string_view text, std::string_view name) {
  return Importer({{std::string(name), std::string(text)}}).run();
}

Trace read_simgrid_ti(const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::path index = path;
  if (std::filesystem::is_directory(path, ec)) {
    index = path / "trace.txt";
    if (!std::filesystem::exists(index, ec)) {
      throw TraceError(
          fmt::format("{}: no trace.txt in this folder (the index smpirun -trace-ti "
                      "writes)",
                      path.string()));
    }
  }
  std::string text = read_input_file(index, "SimGrid TI trace");
  // A JSON document (a ranklab trace given with --format simgrid-ti) read as an index
  // echoed its whole first line as a file name.
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && (text[first] == '{' || text[first] == '[')) {
    throw TraceError(fmt::format(
        "{}: a JSON document, not a SimGrid time-independent trace (a ranklab trace is read "
        "with --format ranklab)",
        index.string()));
  }
  if (!is_index(text)) return parse_simgrid_ti(text, index.string());
  std::vector<TiFile> files;
  for_each_line(text, [&](std::uint32_t line, const auto& words) {
    if (words.size() != 1) {
      throw TraceError(fmt::format(
          "{}:{}: expected 'RANK ACTION ...' or, in an index, one file name, got {} words "
          "starting {}",
          index.string(), line, words.size(), quote_input(words[0])));
    }
    const std::filesystem::path listed = index.parent_path() / std::string(words[0]);
    files.push_back(
        {listed.string(), read_listed_file(listed, fmt::format("{}:{}", index.string(), line))});
  });
  return Importer(std::move(files)).run();
}

}  // namespace ranklab
