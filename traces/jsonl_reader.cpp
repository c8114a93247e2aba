// Trace format v1 reader: validates every line and reports the first problem as
// `name:line: reason` (traces/FORMAT.md lists what a valid line is). Event lines are parsed
// by a fast parser of the JSON ranklab writes (detail/json_line.hpp) and decoded from its
// tape; a line outside its subset, or one that fails, is parsed again with nlohmann::json,
// which words every error (issue 17 §3: a 1 M-event trace read at over 1 M events/s).
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <istream>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "traces/call_site_table.hpp"
#include "traces/detail/event_parser.hpp"
#include "traces/detail/json_fields.hpp"
#include "traces/detail/json_line.hpp"
#include "traces/error.hpp"
#include "traces/input_file.hpp"
#include "traces/jsonl.hpp"
#include "traces/progress.hpp"
#include "traces/quote_input.hpp"

namespace ranklab {
namespace {

using detail::as_array;
using detail::as_integer;
using detail::as_object;
using detail::as_string;
using detail::describe;
using detail::fail;
using detail::find_field;
using detail::require_field;
using nlohmann::json;

constexpr std::uint64_t kSupportedMajor = 1;
constexpr std::int64_t kMaxWorldSize = std::int64_t{1} << 20;

// ---- header -----------------------------------------------------------------------------

/// Accepts "1.MINOR" for any MINOR: minor versions only add fields, which are ignored.
void check_version(std::string_view version) {
  const auto numbers = detail::decimal_pair(version, '.');
  if (!numbers) fail("malformed version {} (expected \"MAJOR.MINOR\")", quote_input(version));
  if (numbers->first != kSupportedMajor) {
    fail("unsupported trace version {} (this reader supports {}.x)", excerpt(version),
         kSupportedMajor);
  }
}

int parse_world_size(const json& value) {
  const std::int64_t world = as_integer(value, "world_size");
  if (world < 1 || world > kMaxWorldSize) {
    fail("world_size {} out of range [1, {}]", world, kMaxWorldSize);
  }
  return static_cast<int>(world);
}

TraceGroup parse_group(const json& value, int world_size) {
  if (!value.is_object()) fail("each entry of 'groups' must be an object, got {}", describe(value));
  TraceGroup group;
  group.name = as_string(require_field(value, "name"), "name");
  if (group.name.empty()) fail("group names must not be empty");
  std::unordered_set<std::int64_t> seen;
  for (const json& entry : as_array(require_field(value, "ranks"), "ranks")) {
    const std::int64_t rank = as_integer(entry, "ranks");
    if (rank < 0 || rank >= world_size) {
      fail("group {} lists rank {}, out of range [0, {})", quote_input(group.name), rank,
           world_size);
    }
    if (!seen.insert(rank).second) {
      fail("group {} lists rank {} twice", quote_input(group.name), rank);
    }
    group.ranks.push_back(static_cast<int>(rank));
  }
  if (group.ranks.empty()) fail("group {} has no ranks", quote_input(group.name));
  return group;
}

std::vector<TraceGroup> parse_groups(const json& value, int world_size) {
  std::vector<TraceGroup> groups;
  std::unordered_set<std::string> names;
  for (const json& entry : as_array(value, "groups")) {
    groups.push_back(parse_group(entry, world_size));
    if (!names.insert(groups.back().name).second) {
      fail("duplicate group name {}", quote_input(groups.back().name));
    }
  }
  std::vector<int> all_ranks(static_cast<std::size_t>(world_size));
  std::iota(all_ranks.begin(), all_ranks.end(), 0);
  if (groups.empty() || groups[0].name != "world" || groups[0].ranks != all_ranks) {
    fail("the first group must be 'world' with ranks 0..{} in order", world_size - 1);
  }
  return groups;
}

TraceHeader parse_header(const json& line) {
  if (!line.is_object()) {
    fail("not a ranklab trace header (expected a JSON object, got {})", describe(line));
  }
  const json* format = find_field(line, "format");
  if (format == nullptr) fail("not a ranklab trace header (no 'format' field)");
  const std::string& format_name = as_string(*format, "format");
  if (format_name != TraceHeader::kFormat) {
    fail("not a ranklab trace (format {}, expected '{}')", quote_input(format_name),
         TraceHeader::kFormat);
  }
  TraceHeader header;
  header.version = as_string(require_field(line, "version"), "version");
  check_version(header.version);
  header.world_size = parse_world_size(require_field(line, "world_size"));
  header.groups = parse_groups(require_field(line, "groups"), header.world_size);
  header.config = as_object(require_field(line, "config"), "config");
  return header;
}

// ---- lines ------------------------------------------------------------------------------

/// How deep arrays and objects may nest in a line (serde_json's limit). ranklab writes 3
/// levels; whatever walks a parsed value (copying or dumping the header's config, comparing
/// traces) recurses once per level, and 150,000 levels overflowed the stack (issue 16).
constexpr std::size_t kMaxJsonDepth = 128;

/// Fails on nesting deeper than kMaxJsonDepth, before anything recursive sees the line.
/// Brackets inside strings do not count; the parser reports any other malformation.
void check_depth(std::string_view text) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character, a quote perhaps
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) {
        fail("nesting deeper than {} arrays and objects (column {})", kMaxJsonDepth, i + 1);
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
}

/// nlohmann's message, whose quoted token ("last read: '...'") can be the whole line, cut.
std::string shortened(std::string_view detail) {
  const std::size_t open = detail.find('\'');
  const std::size_t close = detail.rfind('\'');
  if (open == std::string_view::npos || close <= open) return std::string(detail);
  return std::string(detail.substr(0, open)) +
         quote_input(detail.substr(open + 1, close - open - 1)) +
         std::string(detail.substr(close + 1));
}

/// Whether a line can be an object: its first byte but blanks is '{'. One that cannot is
/// refused on that byte, before a parser reads what may be hundreds of megabytes (a 200 MB
/// array took 15-30 s and 3.6 GB to refuse).
bool starts_object(std::string_view text) {
  const std::size_t first = text.find_first_not_of(" \t");
  return first != std::string_view::npos && text[first] == '{';
}

/// A line that is not an object as an error shows it: as describe() shows a value.
std::string describe_line(std::string_view text) {
  const std::size_t first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return "";
  const std::size_t last = text.find_last_not_of(" \t");
  return excerpt(text.substr(first, last + 1 - first), 40);
}

json parse_json(std::string_view text) {
  check_depth(text);
  // nlohmann's parse ends its input at a NUL: "EVENT\0EVENT" in place of two lines would
  // read as the first event alone, the second dropped without a word.
  if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos) {
    fail("invalid JSON (a NUL byte at column {})", nul + 1);
  }
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::exception& error) {
    // parse_error, or out_of_range for a number no double holds (1e400): found by fuzzing.
    // Drop nlohmann's "[json.exception...] parse error at line 1, " prefix: the line is ours.
    std::string_view detail = error.what();
    const std::size_t column = detail.find("column ");
    const std::size_t tag_end = detail.find("] ");
    if (column != std::string_view::npos) {
      detail.remove_prefix(column);
    } else if (tag_end != std::string_view::npos) {
      detail.remove_prefix(tag_end + 2);
    }
    fail("invalid JSON ({})", shortened(detail));
  }
}

/// Splits a stream into lines as std::getline would, reading it in large blocks (a line
/// at a time through an istream costs more than parsing the line).
class LineSplitter {
 public:
  explicit LineSplitter(std::istream& in) : in_(in), buffer_(kBlock) {}

  /// The next line without its '\n'; false at the end of the stream.
  bool next(std::string_view& line) {
    while (true) {
      const char* start = buffer_.data() + begin_;
      const void* newline = std::memchr(start, '\n', end_ - begin_);
      if (newline != nullptr) {
        const auto length = static_cast<std::size_t>(static_cast<const char*>(newline) - start);
        line = std::string_view(start, length);
        begin_ += length + 1;
        consumed_ += length + 1;
        return true;
      }
      if (!fill()) {
        if (begin_ == end_) return false;
        line = std::string_view(buffer_.data() + begin_, end_ - begin_);  // no final '\n'
        consumed_ += end_ - begin_;
        begin_ = end_;
        return true;
      }
    }
  }

  bool bad() const { return in_.bad(); }
  std::uint64_t consumed() const { return consumed_; }

 private:
  static constexpr std::size_t kBlock = std::size_t{1} << 20;

  /// Reads more after the partial line in the buffer; false when the stream has no more.
  bool fill() {
    if (in_.eof() || in_.bad()) return false;
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
    if (buffer_.size() - end_ < kBlock / 2) buffer_.resize(buffer_.size() * 2);  // a long line
    in_.read(buffer_.data() + end_, static_cast<std::streamsize>(buffer_.size() - end_));
    const auto got = static_cast<std::size_t>(in_.gcount());
    end_ += got;
    return got > 0;
  }

  std::istream& in_;
  std::vector<char> buffer_;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  std::uint64_t consumed_ = 0;
};

}  // namespace

/// Reads one stream line by line, remembering where it is for error messages.
class JsonlEventReader::Impl {
 public:
  Impl(std::istream& in, std::string_view name, std::uint64_t total_bytes, bool show_progress)
      : lines_(in), name_(name), total_bytes_(total_bytes) {
    if (show_progress) progress_.emplace(fmt::format("reading {}", name), total_bytes, Progress::Unit::bytes);
    if (!next_line()) fail_at(1, "empty trace file (no header line)");
    header_ = at_current_line([&] {
      if (!starts_object(line_)) {
        fail("not a ranklab trace header (expected a JSON object, got {})", describe_line(line_));
      }
      return parse_header(parse_json(line_));
    });
    header_line_ = line_no_;
    parser_.emplace(header_);
  }

  bool next(TraceEvent& event) {
    if (!next_line()) {
      if (lines_.bad()) fail_at(line_no_ + 1, "read error");
      if (progress_) progress_->finish();
      return false;
    }
    if (progress_) progress_->update(lines_.consumed());
    event = at_current_line([&] { return decode(line_); });
    event.source = {.file = 0, .line = line_no_};
    return true;
  }

  [[noreturn]] void fail_at(std::uint64_t line, std::string_view reason) const {
    throw TraceError(fmt::format("{}:{}: {}", name_, line, reason));
  }

  const TraceHeader& header() const { return header_; }
  std::uint64_t header_line() const { return header_line_; }
  std::uint64_t bytes_read() const { return lines_.consumed(); }
  std::uint64_t total_bytes() const { return total_bytes_; }

 private:
  /// Lines as ranklab writes them are decoded directly (parse_written); others in the fast
  /// parser's subset from its tape; any other line, and any line whose decoding fails, from
  /// nlohmann's parse, so that every error reads as it always has (the three agree on every
  /// line the faster ones take).
  TraceEvent decode(std::string_view text) {
    TraceEvent event;
    try {
      if (parser_->parse_written(text, event)) return event;
    } catch (const detail::LineError&) {
      // Worded by the nlohmann path below.
    }
    if (!starts_object(text)) fail("event must be a JSON object, got {}", describe_line(text));
    if (const detail::JsonValue* line = fast_.parse(text)) {
      try {
        return parser_->parse(*line);
      } catch (const detail::LineError&) {
        // Worded by the nlohmann path below.
      }
    }
    return parser_->parse(parse_json(text));
  }

  /// The next non-blank line into line_; false at the end of the stream.
  bool next_line() {
    while (lines_.next(line_)) {
      ++line_no_;
      if (!line_.empty() && line_.back() == '\r') line_.remove_suffix(1);
      if (line_.find_first_not_of(" \t") != std::string_view::npos) return true;
    }
    return false;
  }

  template <typename Parse>
  auto at_current_line(Parse&& parse) const -> decltype(parse()) {
    try {
      return parse();
    } catch (const detail::LineError& error) {
      fail_at(line_no_, error.what());
    }
  }

  LineSplitter lines_;
  std::string name_;
  std::uint64_t total_bytes_;
  std::optional<Progress> progress_;
  std::string_view line_;
  std::uint64_t line_no_ = 0;
  TraceHeader header_;
  std::uint64_t header_line_ = 0;
  std::optional<detail::EventParser> parser_;  ///< made from header_, once it is read
  detail::JsonLineParser fast_;
};

JsonlEventReader::JsonlEventReader(std::istream& in, std::string_view name,
                                   std::uint64_t total_bytes, bool show_progress)
    : impl_(std::make_unique<Impl>(in, name, total_bytes, show_progress)) {}
JsonlEventReader::~JsonlEventReader() = default;
const TraceHeader& JsonlEventReader::header() const { return impl_->header(); }
std::uint64_t JsonlEventReader::header_line() const { return impl_->header_line(); }
std::uint64_t JsonlEventReader::bytes_read() const { return impl_->bytes_read(); }
std::uint64_t JsonlEventReader::total_bytes() const { return impl_->total_bytes(); }
bool JsonlEventReader::next(TraceEvent& event) { return impl_->next(event); }
void JsonlEventReader::fail_at(std::uint64_t line, std::string_view reason) const {
  impl_->fail_at(line, reason);
}

namespace {

/// One rank's events in rank_seq order; a repeated rank_seq names both lines.
std::vector<TraceEvent> sorted_events(std::vector<TraceEvent> events,
                                      const JsonlEventReader& reader) {
  // Files list a rank's events in order (ranklab writes them so): sorting is then a check.
  const auto by_seq = [](const auto& a, const auto& b) { return a.rank_seq < b.rank_seq; };
  if (!std::is_sorted(events.begin(), events.end(), by_seq)) {
    std::stable_sort(events.begin(), events.end(), by_seq);
  }
  for (std::size_t i = 0; i < events.size(); ++i) {
    const TraceEvent& e = events[i];
    if (i > 0 && e.rank_seq == events[i - 1].rank_seq) {
      reader.fail_at(e.source.line,
                     fmt::format("rank {} rank_seq {} repeats line {} (rank_seq must be strictly "
                                 "increasing per rank)",
                                 e.rank, e.rank_seq, events[i - 1].source.line));
    }
    if (i + 1 < events.size() && !e.compute_after.empty()) {
      reader.fail_at(e.source.line, fmt::format("compute_after on rank {} rank_seq {}, which is "
                                                "not the rank's last operation",
                                                e.rank, e.rank_seq));
    }
  }
  return events;
}

constexpr std::uint64_t kEventsBeforeEstimate = 4096;

/// Reserves each rank the events the file's size predicts (from the first lines' length)
/// with a tenth to spare: growing a million-event trace by doubling moved every event about
/// twice, a tenth of the reading time. Unbalanced ranks just grow past it.
void reserve_estimate(std::vector<std::vector<TraceEvent>>& by_rank,
                      const JsonlEventReader& reader, std::uint64_t events) {
  if (reader.total_bytes() == 0 || reader.bytes_read() == 0) return;
  const double per_byte = static_cast<double>(events) / static_cast<double>(reader.bytes_read());
  const double total = per_byte * static_cast<double>(reader.total_bytes());
  const auto per_rank = static_cast<std::size_t>(1.1 * total / static_cast<double>(by_rank.size()));
  for (auto& events_of_rank : by_rank) events_of_rank.reserve(per_rank);
}

Trace read_events(JsonlEventReader& reader, std::string_view name) {
  Trace trace;
  trace.header = reader.header();
  trace.sources = {.files = {std::string(name)}, .header_line = reader.header_line()};
  std::vector<std::vector<TraceEvent>> by_rank(static_cast<std::size_t>(trace.header.world_size));
  TraceEvent event;
  std::uint64_t events = 0;
  while (reader.next(event)) {
    by_rank[static_cast<std::size_t>(event.rank)].push_back(std::move(event));
    if (++events == kEventsBeforeEstimate) reserve_estimate(by_rank, reader, events);
  }
  trace.ranks.resize(by_rank.size());
  for (std::size_t rank = 0; rank < by_rank.size(); ++rank) {
    trace.ranks[rank] = sorted_events(std::move(by_rank[rank]), reader);
  }
  return trace;
}

std::uint64_t regular_file_size(const std::filesystem::path& path) {
  std::error_code error;
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  return error ? 0 : static_cast<std::uint64_t>(size);
}

}  // namespace

Trace read_trace(std::istream& in, std::string_view name) {
  JsonlEventReader reader(in, name);
  return read_events(reader, name);
}

JsonlEventFile::JsonlEventFile(const std::filesystem::path& path, bool show_progress)
    : in(std::make_unique<std::ifstream>(open_input_file(path, "trace file"))),
      reader(*in, path.string(), regular_file_size(path), show_progress) {}

Trace read_trace_file(const std::filesystem::path& path) {
  JsonlEventFile file(path);
  return read_events(file.reader, path.string());
}

}  // namespace ranklab
