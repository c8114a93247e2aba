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
using detail::as_enum;
using detail::as_integer;
using detail::as_object;
using detail::as_rank;
using detail::as_string;
using detail::as_unsigned;
using detail::describe;
using detail::fail;
using detail::find_field;
using detail::parse_digits;
using detail::require_field;
using nlohmann::json;

constexpr std::uint64_t kSupportedMajor = 1;
constexpr std::int64_t kMaxWorldSize = std::int64_t{1} << 20;

// ---- header -----------------------------------------------------------------------------

/// Accepts "1.MINOR" for any MINOR: minor versions only add fields, which are ignored.
void check_version(std::string_view version) {
  const std::size_t dot = version.find('.');
  std::optional<std::uint64_t> major;
  std::optional<std::uint64_t> minor;
  if (dot != std::string_view::npos) {
    major = parse_digits(version.substr(0, dot), 10);
    minor = parse_digits(version.substr(dot + 1), 10);
  }
  if (!major || !minor) {
    fail("malformed version {} (expected \"MAJOR.MINOR\")", quote_input(version));
  }
  if (*major != kSupportedMajor) {
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

// ---- events -----------------------------------------------------------------------------

template <typename Json>
void reject_fields(const Json& line, OpKind op, std::initializer_list<const char*> keys) {
  for (const char* key : keys) {
    if (find_field(line, key) != nullptr) {
      fail("field '{}' does not apply to {}", key, to_string(op));
    }
  }
}

template <typename Json>
std::uint64_t parse_hash(const Json& value) {
  const std::string_view text = as_string(value, "hash");
  const auto hash = text.size() == 16 ? parse_digits(text, 16) : std::nullopt;
  if (!hash) fail("malformed hash {} (expected 16 hex digits)", quote_input(text));
  return *hash;
}

/// Turns event lines into TraceEvents, checking them against the header.
class EventParser {
 public:
  explicit EventParser(const TraceHeader& header) : header_(header) {
    for (std::uint32_t g = 0; g < header.groups.size(); ++g) {
      group_index_.emplace(header.groups[g].name, g);
      std::vector<int> members = header.groups[g].ranks;
      std::sort(members.begin(), members.end());
      sorted_members_.push_back(std::move(members));
    }
  }

  template <typename Json>
  TraceEvent parse(const Json& line) const {
    if (!line.is_object()) fail("event must be a JSON object, got {}", describe(line));
    TraceEvent event;
    event.rank = as_rank(require_field(line, "rank"), "rank", header_.world_size);
    event.rank_seq = as_unsigned(require_field(line, "rank_seq"), "rank_seq");
    event.op = as_enum(require_field(line, "op"), "op", parse_op_kind);
    if (const Json* status = find_field(line, "status")) {
      event.status = as_enum(*status, "status", parse_op_status);
    }
    event.group = parse_group_name(require_field(line, "group"), event.rank);
    parse_payload(line, event);
    if (is_point_to_point(event.op)) {
      parse_point_to_point(line, event);
    } else {
      parse_collective(line, event);
    }
    event.lamport = as_unsigned(require_field(line, "lamport"), "lamport");
    parse_wait_points(line, event);
    parse_time(line, event);
    parse_site(line, event);
    return event;
  }

 private:
  void check_member(const char* key, int rank, std::uint32_t group) const {
    if (group == 0) return;  // 'world' (parse_groups checked): every rank in range is in it
    const std::vector<int>& members = sorted_members_[group];
    if (!std::binary_search(members.begin(), members.end(), rank)) {
      fail("{} {} is not a member of group {}", key, rank, quote_input(header_.groups[group].name));
    }
  }

  /// A global rank that belongs to the event's group (`peer`, `root`).
  template <typename Json>
  int parse_member(const Json& value, const char* key, std::uint32_t group) const {
    const int rank = as_rank(value, key, header_.world_size);
    check_member(key, rank, group);
    return rank;
  }

  template <typename Json>
  std::uint32_t parse_group_name(const Json& value, int rank) const {
    const std::string_view name = as_string(value, "group");
    // Consecutive lines mostly name one group: the last one found is compared first.
    if (name != last_group_name_) {
      const auto it = group_index_.find(name);
      if (it == group_index_.end()) fail("unknown group {}", quote_input(name));
      last_group_name_.assign(name);
      last_group_ = it->second;
    }
    check_member("rank", rank, last_group_);
    return last_group_;
  }

  template <typename Json>
  static void parse_payload(const Json& line, TraceEvent& event) {
    event.dtype = as_enum(require_field(line, "dtype"), "dtype", parse_data_type);
    event.count = as_unsigned(require_field(line, "count"), "count");
    event.bytes = as_unsigned(require_field(line, "bytes"), "bytes");
    if (event.count > kMaxTraceCount) {
      fail("count {} exceeds the limit of 2^48 elements", event.count);
    }
    if (event.bytes != event.count * size_of(event.dtype)) {
      fail("bytes {} != count {} * {} (size of {})", event.bytes, event.count, size_of(event.dtype),
           to_string(event.dtype));
    }
    if (const Json* hash = find_field(line, "hash")) {
      event.hash = parse_hash(*hash);
      event.has_hash = true;
    }
  }

  template <typename Json>
  void parse_point_to_point(const Json& line, TraceEvent& event) const {
    reject_fields(line, event.op, {"coll_seq", "root", "reduce_op"});
    if (const Json* peer = find_field(line, "peer")) {
      event.peer = parse_member(*peer, "peer", event.group);
    } else if (event.op != OpKind::recv || event.status != OpStatus::pending) {
      // Only a receive from any source that never matched has no peer.
      fail("missing required field 'peer'");
    }
    const std::int64_t tag = as_integer(require_field(line, "tag"), "tag");
    if (tag < INT_MIN || tag > INT_MAX) fail("field 'tag' is out of range, got {}", tag);
    event.tag = static_cast<int>(tag);
    if (const Json* any = find_field(line, "any_source")) {  // format 1.3
      if (!any->is_boolean()) fail("field 'any_source' must be true or false, got {}", describe(*any));
      event.any_source = any->template get<bool>();
      if (event.any_source && event.op != OpKind::recv) fail("field 'any_source' applies only to recv");
    }
    if (const Json* msg = find_field(line, "msg")) event.msg = parse_msg(*msg);
  }

  template <typename Json>
  void parse_collective(const Json& line, TraceEvent& event) const {
    reject_fields(line, event.op, {"peer", "tag", "msg"});
    const std::uint64_t coll_seq = as_unsigned(require_field(line, "coll_seq"), "coll_seq");
    if (coll_seq > static_cast<std::uint64_t>(INT64_MAX)) {
      fail("field 'coll_seq' is out of range, got {}", coll_seq);
    }
    event.coll_seq = static_cast<std::int64_t>(coll_seq);
    if (takes_root(event.op)) {
      event.root = parse_member(require_field(line, "root"), "root", event.group);
    } else {
      reject_fields(line, event.op, {"root"});
    }
    if (takes_reduce_op(event.op)) {
      event.has_reduce_op = true;
      event.reduce_op = as_enum(require_field(line, "reduce_op"), "reduce_op", parse_reduce_op);
    } else {
      reject_fields(line, event.op, {"reduce_op"});
    }
  }

  /// `in_flight` and `blocked` (format 1.1): optional, absent in 1.0 traces.
  template <typename Json>
  static void parse_wait_points(const Json& line, TraceEvent& event) {
    if (const Json* in_flight = find_field(line, "in_flight")) {
      for (const Json& entry : as_array(*in_flight, "in_flight")) {
        const std::uint64_t seq = as_unsigned(entry, "in_flight");
        if (seq >= event.rank_seq) {
          fail("in_flight lists rank_seq {}, not earlier than this operation's {}", seq,
               event.rank_seq);
        }
        if (!event.in_flight.empty() && seq <= event.in_flight.back()) {
          fail("in_flight must be strictly increasing ({} after {})", seq, event.in_flight.back());
        }
        event.in_flight.push_back(seq);
      }
    }
    if (const Json* blocked = find_field(line, "blocked")) {
      if (!blocked->is_boolean())
        fail("field 'blocked' must be true or false, got {}", describe(*blocked));
      event.blocked = blocked->template get<bool>();
      if (event.blocked && event.status != OpStatus::pending) {
        fail("field 'blocked' applies only to pending operations");
      }
    }
  }

  /// `compute`, `compute_after`, `vt_post_ns`, `vt_end_ns` (format 1.1): optional.
  template <typename Json>
  static void parse_time(const Json& line, TraceEvent& event) {
    if (const Json* compute = find_field(line, "compute")) {
      event.compute = parse_compute(*compute, "compute");
    }
    if (const Json* after = find_field(line, "compute_after")) {
      event.compute_after = parse_compute(*after, "compute_after");
    }
    if (const Json* post = find_field(line, "vt_post_ns"))
      event.vt_post_ns = parse_time_ns(*post, "vt_post_ns");
    if (const Json* end = find_field(line, "vt_end_ns")) {
      event.vt_end_ns = parse_time_ns(*end, "vt_end_ns");
      if (event.vt_post_ns == kNoTime) fail("vt_end_ns without vt_post_ns");
      if (event.vt_end_ns < event.vt_post_ns) {
        fail("vt_end_ns {} is before vt_post_ns {}", event.vt_end_ns, event.vt_post_ns);
      }
    }
  }

  /// `site` (format 1.2): optional {"file": S, "line": N, "function": S, "label": S}, each
  /// member optional.
  template <typename Json>
  void parse_site(const Json& line, TraceEvent& event) const {
    const Json* field = find_field(line, "site");
    if (field == nullptr) return;
    constexpr bool kFromLine = std::is_same_v<Json, detail::JsonValue>;
    if constexpr (kFromLine) {
      // Consecutive lines mostly give one site, written alike: the same text is the same
      // site, decoded (and checked) the last time.
      if (field->is_object() && field->text() == last_site_text_) {
        event.site = last_site_;
        return;
      }
    }
    const Json& object = as_object(*field, "site");
    CallSite site;
    if (const Json* file = find_field(object, "file")) site.file = as_string(*file, "site.file");
    if (const Json* number = find_field(object, "line")) {
      const std::uint64_t value = as_unsigned(*number, "site.line");
      if (value > UINT32_MAX) fail("field 'site.line' is out of range, got {}", value);
      site.line = static_cast<std::uint32_t>(value);
    }
    if (const Json* function = find_field(object, "function"))
      site.function = as_string(*function, "site.function");
    if (const Json* label = find_field(object, "label"))
      site.label = as_string(*label, "site.label");
    event.site = sites_.intern(std::move(site));
    if constexpr (kFromLine) {
      last_site_text_.assign(field->text());
      last_site_ = event.site;
    }
  }

  template <typename Json>
  static std::int64_t parse_time_ns(const Json& value, const char* key) {
    const std::uint64_t ns = as_unsigned(value, key);
    if (ns > static_cast<std::uint64_t>(INT64_MAX))
      fail("field '{}' is out of range, got {}", key, ns);
    return static_cast<std::int64_t>(ns);
  }

  /// {"flops": F, "s": S} (1.1), each optional, finite and >= 0; or (1.2) an array of
  /// compute events, each {"label", "layer", "mb", "chunk", "flops", "s", "vt_start_ns",
  /// "vt_end_ns"}, all optional.
  template <typename Json>
  static ComputeWork parse_compute(const Json& value, const char* key) {
    ComputeWork work;
    if (value.is_array()) {
      for (std::size_t i = 0; i < value.size(); ++i) {
        work.add(parse_compute_item(value[i], fmt::format("{}[{}]", key, i)));
      }
      return work;
    }
    if (!value.is_object()) {
      fail("field '{}' must be an object or an array of compute events, got {}", key,
           describe(value));
    }
    amount(value, key, "flops", work.flops);
    amount(value, key, "s", work.seconds);
    return work;
  }

  template <typename Json>
  static ComputeItem parse_compute_item(const Json& value, const std::string& key) {
    as_object(value, key.c_str());
    ComputeItem item;
    if (const Json* label = find_field(value, "label")) {
      item.label = as_string(*label, (key + ".label").c_str());
    }
    const auto index = [&](const char* member, int& out) {
      const Json* number = find_field(value, member);
      if (number == nullptr) return;
      const std::string name = key + "." + member;
      const std::uint64_t n = as_unsigned(*number, name.c_str());
      if (n > static_cast<std::uint64_t>(INT32_MAX))
        fail("field '{}' is out of range, got {}", name, n);
      out = static_cast<int>(n);
    };
    index("layer", item.layer);
    index("mb", item.microbatch);
    index("chunk", item.chunk);
    parse_staging(value, key, item);
    amount(value, key.c_str(), "flops", item.flops);
    amount(value, key.c_str(), "s", item.seconds);
    const auto time = [&](const char* member, std::int64_t& out) {
      if (const Json* ns = find_field(value, member))
        out = parse_time_ns(*ns, (key + "." + member).c_str());
    };
    time("vt_start_ns", item.vt_start_ns);
    time("vt_end_ns", item.vt_end_ns);
    if (item.vt_end_ns != kNoTime &&
        (item.vt_start_ns == kNoTime || item.vt_end_ns < item.vt_start_ns)) {
      fail("field '{}.vt_end_ns' must come with an earlier or equal vt_start_ns", key);
    }
    return item;
  }

  /// A staging copy's members (format 1.3): `copy` "d2h" or "h2d", `bytes`, `device`;
  /// `bytes` and `device` only with `copy`.
  template <typename Json>
  static void parse_staging(const Json& value, const std::string& key, ComputeItem& item) {
    const Json* copy = find_field(value, "copy");
    if (copy == nullptr) {
      if (find_field(value, "bytes") || find_field(value, "device"))
        fail("field '{}' has 'bytes' or 'device' without 'copy'", key);
      return;
    }
    const std::string_view direction = as_string(*copy, (key + ".copy").c_str());
    if (direction == "d2h") {
      item.copy = StagingCopy::to_host;
    } else if (direction == "h2d") {
      item.copy = StagingCopy::to_device;
    } else {
      fail("field '{}.copy' must be \"d2h\" or \"h2d\", got {}", key, quote_input(direction));
    }
    if (const Json* bytes = find_field(value, "bytes"))
      item.bytes = as_unsigned(*bytes, (key + ".bytes").c_str());
    if (const Json* device = find_field(value, "device"))
      item.device = std::string(as_string(*device, (key + ".device").c_str()));
  }

  /// `object.member`: optional, a finite number >= 0.
  template <typename Json>
  static void amount(const Json& object, const char* key, const char* member, double& out) {
    const Json* number = find_field(object, member);
    if (number == nullptr) return;
    if (!number->is_number() || !std::isfinite(number->template get<double>()) ||
        number->template get<double>() < 0) {
      fail("field '{}.{}' must be a finite number >= 0, got {}", key, member, describe(*number));
    }
    out = number->template get<double>();
  }

  template <typename Json>
  MessageId parse_msg(const Json& value) const {
    const std::string_view text = as_string(value, "msg");
    const std::size_t colon = text.find(':');
    std::optional<std::uint64_t> sender;
    std::optional<std::uint64_t> seq;
    if (colon != std::string_view::npos) {
      sender = parse_digits(text.substr(0, colon), 10);
      seq = parse_digits(text.substr(colon + 1), 10);
    }
    if (!sender || !seq) fail("malformed msg {} (expected \"SENDER:SEQ\")", quote_input(text));
    if (*sender >= static_cast<std::uint64_t>(header_.world_size)) {
      fail("msg sender {} out of range [0, {})", *sender, header_.world_size);
    }
    return MessageId{static_cast<int>(*sender), *seq};
  }

  const TraceHeader& header_;
  /// Group names to indices; looked up by the line's string_view without a copy.
  struct NameHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view name) const {
      return std::hash<std::string_view>{}(name);
    }
  };
  std::unordered_map<std::string, std::uint32_t, NameHash, std::equal_to<>> group_index_;
  std::vector<std::vector<int>> sorted_members_;  ///< per group, for membership checks
  /// One copy of each call site the events give (a parse is logically const).
  mutable CallSiteTable sites_;
  /// The last group name and site decoded from a fast-parsed line (caches, so mutable).
  mutable std::string last_group_name_;
  mutable std::uint32_t last_group_ = 0;
  mutable std::string last_site_text_;
  mutable SiteRef last_site_;
};

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
  /// Lines in the fast parser's subset (all that ranklab writes) are decoded from its tape;
  /// any other line, and any line whose decoding fails, from nlohmann's parse, so that
  /// every error reads as it always has (the two agree on every line the fast one takes).
  TraceEvent decode(std::string_view text) {
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
  std::optional<EventParser> parser_;  ///< made from header_, once it is read
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
