// EventParser::parse_written: the event lines ranklab writes (jsonl.cpp's append_event),
// decoded in one pass straight into a TraceEvent (issue 30: `ranklab replay FILE` at 0.7x
// the replay from memory). The fast parser's tape and its ~28 finds a line cost more than
// the replay of the event; here each key is expected where the writer puts it, one
// comparison, and each value is read into its field as the cursor passes it.
//
// It takes only lines in exactly the writer's form: its keys in its order, no blanks,
// strings of printable ASCII without escapes, integers without sign (but the tag), fraction
// or exponent of at most 19 digits, and no compute (those go to the tape, as does every
// line it leaves). Every check is parse()'s own (event_parser.hpp's helpers) or is "leave
// the line to parse()", so a line it takes decodes as parse() decodes it, and a line it
// refuses reads and fails exactly as before.
#include <bit>
#include <cstring>

#include "traces/detail/event_parser.hpp"

namespace ranklab::detail {
namespace {

/// A cursor over one line (in the reader's buffer: nothing past its end may be read).
class Cursor {
 public:
  explicit Cursor(std::string_view line) : at_(line.data()), end_(line.data() + line.size()) {}

  const char* position() const { return at_; }
  bool done() const { return at_ == end_; }

  /// Moves past `text` if the line goes on with it. Inlined, and compared a word at a time
  /// here rather than by memcmp (which GCC called, eleven times a line): with a literal's
  /// known length and bytes, each key is one or two compares of a load with a constant.
  [[gnu::always_inline]] bool skip(std::string_view text) {
    const std::size_t size = text.size();
    if (static_cast<std::size_t>(end_ - at_) < size) return false;
    std::size_t i = 0;
    for (; i + 8 <= size; i += 8) {
      std::uint64_t have;
      std::uint64_t want;
      std::memcpy(&have, at_ + i, sizeof have);
      std::memcpy(&want, text.data() + i, sizeof want);
      if (have != want) return false;
    }
    for (; i < size; ++i) {
      if (at_[i] != text[i]) return false;
    }
    at_ += size;
    return true;
  }

  /// Digits of an integer literal without sign: up to 19 (which cannot overflow), no
  /// leading zero. What follows is the caller's next skip(): a fraction or exponent fails it.
  bool digits(std::uint64_t& out) {
    const char* start = at_;
    std::uint64_t value = 0;
    while (at_ != end_ && static_cast<unsigned>(*at_ - '0') < 10) {
      value = value * 10 + static_cast<std::uint64_t>(*at_ - '0');
      ++at_;
    }
    const auto count = at_ - start;
    constexpr long kSafeDigits = 19;
    if (count == 0 || count > kSafeDigits || (*start == '0' && count > 1)) return false;
    out = value;
    return true;
  }

  /// An integer literal as nlohmann reads it into std::int64_t ("-0" is 0); larger
  /// magnitudes are left to parse().
  bool integer(std::int64_t& out) {
    const bool negative = skip("-");
    std::uint64_t magnitude = 0;
    if (!digits(magnitude) || magnitude > static_cast<std::uint64_t>(INT64_MAX)) return false;
    const auto value = static_cast<std::int64_t>(magnitude);
    out = negative ? -value : value;
    return true;
  }

  bool boolean(bool& out) {
    if (skip("true")) {
      out = true;
    } else if (skip("false")) {
      out = false;
    } else {
      return false;
    }
    return true;
  }

  /// A string of the fast parser's subset (unplain_bytes: printable ASCII, no escapes),
  /// eight bytes at a time while eight remain.
  bool string(std::string_view& out) {
    if (!skip("\"")) return false;
    const char* start = at_;
    if constexpr (std::endian::native == std::endian::little) {
      while (end_ - at_ >= 8) {
        std::uint64_t word;
        std::memcpy(&word, at_, sizeof word);
        if (const std::uint64_t special = unplain_bytes(word); special != 0) {
          at_ += __builtin_ctzll(special) / 8;
          return close_string(start, out);
        }
        at_ += 8;
      }
    }
    while (at_ != end_ && (unplain_bytes(static_cast<unsigned char>(*at_)) & 0x80) == 0) ++at_;
    return close_string(start, out);
  }

 private:
  bool close_string(const char* start, std::string_view& out) {
    if (at_ == end_ || *at_ != '"') return false;
    out = std::string_view(start, static_cast<std::size_t>(at_ - start));
    ++at_;
    return true;
  }

  const char* at_;
  const char* end_;
};

template <typename Enum>
bool name_of(Cursor& in, std::optional<Enum> (*parse)(std::string_view), Enum& out) {
  std::string_view name;
  if (!in.string(name)) return false;
  const std::optional<Enum> parsed = parse(name);
  if (!parsed) return false;
  out = *parsed;
  return true;
}

/// `{"file":S,"function":S,"label":S,"line":N}` as nlohmann writes it (keys sorted), each
/// member optional.
bool written_site(Cursor& in, CallSite& site, std::uint64_t& line) {
  if (!in.skip("{")) return false;
  bool first = true;
  const auto member = [&](std::string_view key) {
    Cursor at_member = in;
    if ((!first && !at_member.skip(",")) || !at_member.skip(key)) return false;
    in = at_member;
    first = false;
    return true;
  };
  std::string_view text;
  if (member(R"("file":)")) {
    if (!in.string(text)) return false;
    site.file = text;
  }
  if (member(R"("function":)")) {
    if (!in.string(text)) return false;
    site.function = text;
  }
  if (member(R"("label":)")) {
    if (!in.string(text)) return false;
    site.label = text;
  }
  if (member(R"("line":)") && !in.digits(line)) return false;
  return in.skip("}");
}

}  // namespace

bool EventParser::parse_written(std::string_view line, TraceEvent& event) const {
  Cursor in(line);
  const auto world = static_cast<std::uint64_t>(header_.world_size);
  std::uint64_t number = 0;
  std::string_view text;
  // A rank, peer or root below the world size: parse()'s as_rank, which refuses the rest.
  const auto rank = [&](int& out) {
    if (!in.digits(number) || number >= world) return false;
    out = static_cast<int>(number);
    return true;
  };
  if (!in.skip(R"({"rank":)") || !rank(event.rank)) return false;
  if (!in.skip(R"(,"rank_seq":)") || !in.digits(event.rank_seq)) return false;
  if (!in.skip(R"(,"op":)") || !name_of(in, parse_op_kind, event.op)) return false;
  if (in.skip(R"(,"status":)") && !name_of(in, parse_op_status, event.status)) return false;
  if (!in.skip(R"(,"group":)") || !in.string(text)) return false;
  event.group = group_named(text, event.rank);
  const bool point_to_point = is_point_to_point(event.op);
  if (point_to_point) {
    if (in.skip(R"(,"peer":)")) {
      if (!rank(event.peer)) return false;
      check_member("peer", event.peer, event.group);
    } else {
      check_without_peer(event);
    }
    std::int64_t tag = 0;
    if (!in.skip(R"(,"tag":)") || !in.integer(tag)) return false;
    event.tag = tag_of(tag);
    if (in.skip(R"(,"any_source":)")) {
      if (!in.boolean(event.any_source)) return false;
      check_any_source(event);
    }
  }
  if (!in.skip(R"(,"dtype":)") || !name_of(in, parse_data_type, event.dtype)) return false;
  if (!in.skip(R"(,"count":)") || !in.digits(event.count)) return false;
  if (!in.skip(R"(,"bytes":)") || !in.digits(event.bytes)) return false;
  check_payload(event);
  if (in.skip(R"(,"hash":)")) {
    if (!in.string(text)) return false;
    event.hash = hash_of(text);
    event.has_hash = true;
  }
  if (point_to_point) {
    if (in.skip(R"(,"msg":)")) {
      if (!in.string(text)) return false;
      event.msg = msg_of(text);
    }
  } else {
    if (!in.skip(R"(,"coll_seq":)") || !in.digits(number)) return false;
    event.coll_seq = coll_seq_of(number);
    if (takes_root(event.op)) {
      if (!in.skip(R"(,"root":)") || !rank(event.root)) return false;
      check_member("root", event.root, event.group);
    }
    if (takes_reduce_op(event.op)) {
      if (!in.skip(R"(,"reduce_op":)") || !name_of(in, parse_reduce_op, event.reduce_op)) {
        return false;
      }
      event.has_reduce_op = true;
    }
  }
  if (!in.skip(R"(,"lamport":)") || !in.digits(event.lamport)) return false;
  if (in.skip(R"(,"in_flight":[)") && !in.skip("]")) {
    do {
      if (!in.digits(number)) return false;
      add_in_flight(event, number);
    } while (in.skip(","));
    if (!in.skip("]")) return false;
  }
  if (in.skip(R"(,"blocked":)")) {
    if (!in.boolean(event.blocked)) return false;
    check_blocked(event);
  }
  if (in.skip(R"(,"vt_post_ns":)")) {
    if (!in.digits(number)) return false;
    event.vt_post_ns = time_ns_of(number, "vt_post_ns");
  }
  if (in.skip(R"(,"vt_end_ns":)")) {
    if (!in.digits(number)) return false;
    event.vt_end_ns = time_ns_of(number, "vt_end_ns");
    check_end_time(event);
  }
  if (in.skip(R"(,"site":)")) {
    // The site object is the line but its closing brace; the last line's, most often.
    const char* start = in.position();
    const std::string_view rest(start, static_cast<std::size_t>(line.data() + line.size() - start));
    if (rest.size() >= 2 && rest.back() == '}' &&
        reuse_site(rest.substr(0, rest.size() - 1), event)) {
      return true;
    }
    CallSite site;
    std::uint64_t site_line = 0;
    if (!written_site(in, site, site_line)) return false;
    site.line = site_line_of(site_line);
    const std::string_view site_text(start, static_cast<std::size_t>(in.position() - start));
    if (!in.skip("}") || !in.done()) return false;
    keep_site(site_text, std::move(site), event);
    return true;
  }
  return in.skip("}") && in.done();
}

}  // namespace ranklab::detail
