// Decodes one event line of a trace into a TraceEvent, checking it against the header:
// the rules of traces/FORMAT.md, in one place for every way a line is parsed (nlohmann's
// DOM, the fast parser's tape, or parse_written's direct decoding of the lines ranklab
// writes). Private to traces/ (the JSONL reader's).
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "traces/call_site_table.hpp"
#include "traces/detail/json_fields.hpp"
#include "traces/detail/json_line.hpp"
#include "traces/event.hpp"
#include "traces/quote_input.hpp"

namespace ranklab::detail {

template <typename Json>
void reject_fields(const Json& line, OpKind op, std::initializer_list<const char*> keys) {
  for (const char* key : keys) {
    if (find_field(line, key) != nullptr) {
      fail("field '{}' does not apply to {}", key, to_string(op));
    }
  }
}

/// "A<separator>B", each a whole string of decimal digits (parse_digits): a msg's "SENDER:SEQ",
/// a version's "MAJOR.MINOR". nullopt for anything else.
inline std::optional<std::pair<std::uint64_t, std::uint64_t>> decimal_pair(std::string_view text,
                                                                          char separator) {
  const std::size_t at = text.find(separator);
  if (at == std::string_view::npos) return std::nullopt;
  const std::optional<std::uint64_t> first = parse_digits(text.substr(0, at), 10);
  const std::optional<std::uint64_t> second = parse_digits(text.substr(at + 1), 10);
  if (!first || !second) return std::nullopt;
  return std::pair{*first, *second};
}

inline std::uint64_t hash_of(std::string_view text) {
  const auto hash = text.size() == 16 ? parse_digits(text, 16) : std::nullopt;
  if (!hash) fail("malformed hash {} (expected 16 hex digits)", quote_input(text));
  return *hash;
}

template <typename Json>
std::uint64_t parse_hash(const Json& value) {
  return hash_of(as_string(value, "hash"));
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

  const TraceHeader& header() const { return header_; }

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

  /// Decodes a line as ranklab writes it (jsonl.cpp: its keys in its order, no blanks,
  /// plain strings, no compute) straight into `event`, without a parse tree: false for any
  /// other line, which parse() then reads. Throws LineError where parse() would fail (the
  /// caller words it from parse()). A line it takes decodes to what parse() makes of it.
  /// In written_line.cpp.
  bool parse_written(std::string_view line, TraceEvent& event) const;

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
    return group_named(as_string(value, "group"), rank);
  }

  std::uint32_t group_named(std::string_view name, int rank) const {
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
    check_payload(event);
    if (const Json* hash = find_field(line, "hash")) {
      event.hash = parse_hash(*hash);
      event.has_hash = true;
    }
  }

  static void check_payload(const TraceEvent& event) {
    if (event.count > kMaxTraceCount) {
      fail("count {} exceeds the limit of 2^48 elements", event.count);
    }
    if (event.bytes != event.count * size_of(event.dtype)) {
      fail("bytes {} != count {} * {} (size of {})", event.bytes, event.count, size_of(event.dtype),
           to_string(event.dtype));
    }
  }

  template <typename Json>
  void parse_point_to_point(const Json& line, TraceEvent& event) const {
    reject_fields(line, event.op, {"coll_seq", "root", "reduce_op"});
    if (const Json* peer = find_field(line, "peer")) {
      event.peer = parse_member(*peer, "peer", event.group);
    } else {
      check_without_peer(event);
    }
    event.tag = tag_of(as_integer(require_field(line, "tag"), "tag"));
    if (const Json* any = find_field(line, "any_source")) {  // format 1.3
      if (!any->is_boolean()) fail("field 'any_source' must be true or false, got {}", describe(*any));
      event.any_source = any->template get<bool>();
      check_any_source(event);
    }
    if (const Json* msg = find_field(line, "msg")) event.msg = msg_of(as_string(*msg, "msg"));
  }

  /// Only a receive from any source that never matched has no peer.
  static void check_without_peer(const TraceEvent& event) {
    if (event.op != OpKind::recv || event.status != OpStatus::pending) {
      fail("missing required field 'peer'");
    }
  }

  static int tag_of(std::int64_t tag) {
    if (tag < INT_MIN || tag > INT_MAX) fail("field 'tag' is out of range, got {}", tag);
    return static_cast<int>(tag);
  }

  static void check_any_source(const TraceEvent& event) {
    if (event.any_source && event.op != OpKind::recv) fail("field 'any_source' applies only to recv");
  }

  static std::int64_t coll_seq_of(std::uint64_t coll_seq) {
    if (coll_seq > static_cast<std::uint64_t>(INT64_MAX)) {
      fail("field 'coll_seq' is out of range, got {}", coll_seq);
    }
    return static_cast<std::int64_t>(coll_seq);
  }

  template <typename Json>
  void parse_collective(const Json& line, TraceEvent& event) const {
    reject_fields(line, event.op, {"peer", "tag", "msg"});
    event.coll_seq = coll_seq_of(as_unsigned(require_field(line, "coll_seq"), "coll_seq"));
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
        add_in_flight(event, as_unsigned(entry, "in_flight"));
      }
    }
    if (const Json* blocked = find_field(line, "blocked")) {
      if (!blocked->is_boolean())
        fail("field 'blocked' must be true or false, got {}", describe(*blocked));
      event.blocked = blocked->template get<bool>();
      check_blocked(event);
    }
  }

  static void add_in_flight(TraceEvent& event, std::uint64_t seq) {
    if (seq >= event.rank_seq) {
      fail("in_flight lists rank_seq {}, not earlier than this operation's {}", seq,
           event.rank_seq);
    }
    if (!event.in_flight.empty() && seq <= event.in_flight.back()) {
      fail("in_flight must be strictly increasing ({} after {})", seq, event.in_flight.back());
    }
    event.in_flight.push_back(seq);
  }

  static void check_blocked(const TraceEvent& event) {
    if (event.blocked && event.status != OpStatus::pending) {
      fail("field 'blocked' applies only to pending operations");
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
      check_end_time(event);
    }
  }

  static void check_end_time(const TraceEvent& event) {
    if (event.vt_post_ns == kNoTime) fail("vt_end_ns without vt_post_ns");
    if (event.vt_end_ns < event.vt_post_ns) {
      fail("vt_end_ns {} is before vt_post_ns {}", event.vt_end_ns, event.vt_post_ns);
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
      if (field->is_object() && reuse_site(field->text(), event)) return;
    }
    const Json& object = as_object(*field, "site");
    CallSite site;
    if (const Json* file = find_field(object, "file")) site.file = as_string(*file, "site.file");
    if (const Json* number = find_field(object, "line")) {
      site.line = site_line_of(as_unsigned(*number, "site.line"));
    }
    if (const Json* function = find_field(object, "function"))
      site.function = as_string(*function, "site.function");
    if (const Json* label = find_field(object, "label"))
      site.label = as_string(*label, "site.label");
    if constexpr (kFromLine) {
      keep_site(field->text(), std::move(site), event);
    } else {
      event.site = sites_.intern(std::move(site));
    }
  }

  /// Consecutive lines mostly give one site, written alike: the same text (a site object's,
  /// as the line has it) is the same site, decoded (and checked) the last time.
  bool reuse_site(std::string_view text, TraceEvent& event) const {
    if (text != last_site_text_) return false;
    event.site = last_site_;
    return true;
  }

  /// The shared copy of `site`, which the line wrote as `text`, kept for reuse_site.
  void keep_site(std::string_view text, CallSite site, TraceEvent& event) const {
    event.site = sites_.intern(std::move(site));
    last_site_text_.assign(text);
    last_site_ = event.site;
  }

  static std::uint32_t site_line_of(std::uint64_t value) {
    if (value > UINT32_MAX) fail("field 'site.line' is out of range, got {}", value);
    return static_cast<std::uint32_t>(value);
  }

  template <typename Json>
  static std::int64_t parse_time_ns(const Json& value, const char* key) {
    return time_ns_of(as_unsigned(value, key), key);
  }

  static std::int64_t time_ns_of(std::uint64_t ns, const char* key) {
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

  MessageId msg_of(std::string_view text) const {
    const auto numbers = decimal_pair(text, ':');
    if (!numbers) fail("malformed msg {} (expected \"SENDER:SEQ\")", quote_input(text));
    const auto [sender, seq] = *numbers;
    if (sender >= static_cast<std::uint64_t>(header_.world_size)) {
      fail("msg sender {} out of range [0, {})", sender, header_.world_size);
    }
    return MessageId{static_cast<int>(sender), seq};
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

}  // namespace ranklab::detail
