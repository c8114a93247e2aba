// A fast parser for one JSON Lines line of the kind ranklab writes, for the trace reader's
// hot path (issue 17 §3: a million events a second). Private to traces/.
//
// It parses a strict subset of JSON into a flat array of values (a tape) without allocating
// per line: strings of printable ASCII without escapes, numbers that fit their type, nesting
// up to kMaxFastDepth, no repeated key. Whatever falls outside the subset, malformed or not,
// makes parse() return false, and the reader parses that line with nlohmann::json instead,
// which accepts every valid line and words every error. So the subset only has to agree
// with nlohmann on what it accepts: numbers are classified as nlohmann classifies them
// (digits without '-' unsigned, with '-' signed, "-0" included; a fraction or exponent a
// double), so a line decodes to the same event either way.
//
// JsonValue mimics the few nlohmann::json calls the field accessors make (json_fields.hpp),
// so one event decoder reads both.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace ranklab::detail {

/// The bytes of `word` (eight bytes of a line, read little-endian) that a plain string
/// cannot hold, each flagged by its high bit: '"', '\\', a control byte (NUL among them),
/// 0x7f and every byte >= 0x80. Of the flags, the lowest is always a true one (a borrow
/// only runs upward from a flagged byte), so it is where a plain string's scan stops.
constexpr std::uint64_t unplain_bytes(std::uint64_t word) {
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
  constexpr std::uint64_t kHighs = 0x8080808080808080ULL;
  const std::uint64_t quote = word ^ (kOnes * '"');
  const std::uint64_t backslash = word ^ (kOnes * '\\');
  return ((word - kOnes * 0x20) | (quote - kOnes) | (backslash - kOnes) |
          (word + kOnes)  // 0x7f + 1 sets the high bit
          | word) &
         kHighs;
}

class JsonValue {
 public:
  enum class Kind : std::uint8_t { null, boolean, unsigned_int, negative_int, real, string, array, object };

  bool is_null() const { return kind_ == Kind::null; }
  bool is_boolean() const { return kind_ == Kind::boolean; }
  bool is_number_unsigned() const { return kind_ == Kind::unsigned_int; }
  bool is_number_integer() const { return is_number_unsigned() || kind_ == Kind::negative_int; }
  bool is_number() const { return is_number_integer() || kind_ == Kind::real; }
  bool is_string() const { return kind_ == Kind::string; }
  bool is_array() const { return kind_ == Kind::array; }
  bool is_object() const { return kind_ == Kind::object; }

  /// bool, std::uint64_t, std::int64_t or double, as nlohmann's get<T>() converts numbers.
  template <typename T>
  T get() const;

  /// A string's characters (no quotes); any other value's text as it appears in the line.
  std::string_view text() const { return text_; }
  /// An object member's key.
  std::string_view key() const { return key_; }

  /// Members of an array or object.
  std::size_t size() const { return size_; }
  /// Walks the members (arrays here are short: in_flight, compute events).
  const JsonValue& operator[](std::size_t index) const;

  /// An object's member named `key`; nullptr if it has none. Inline: the reader asks
  /// about thirty per line, each key a literal whose length and bit fold away.
  [[gnu::always_inline]] const JsonValue* find(std::string_view key) const {
    if (kind_ != Kind::object || (key_bits_ & key_bit(key)) == 0) return nullptr;
    // From the member after the last one found, round: the reader asks for fields in about
    // the order ranklab writes them, so most finds compare one key.
    const JsonValue* first = this + 1;
    const JsonValue* last = this + span_;
    const JsonValue* start = this + find_from_;
    for (const JsonValue* member = start; member != last; member += member->span_) {
      if (same_key(member->key_, key)) return found(member);
    }
    for (const JsonValue* member = first; member != start; member += member->span_) {
      if (same_key(member->key_, key)) return found(member);
    }
    return nullptr;
  }

  /// One of 64 bits for a key: an object's keys' bits answer most finds of an absent key
  /// (the reader asks for a dozen optional fields a line seldom has) without a comparison.
  static constexpr std::uint64_t key_bit(std::string_view key) {
    if (key.empty()) return 1;
    const auto first = static_cast<unsigned char>(key.front());
    const auto last = static_cast<unsigned char>(key.back());
    return std::uint64_t{1} << ((key.size() * 7 + first + last * 3) & 63);
  }

  /// Iterates a container's members, each subtree skipped whole.
  class Iterator {
   public:
    explicit Iterator(const JsonValue* at) : at_(at) {}
    const JsonValue& operator*() const { return *at_; }
    Iterator& operator++() {
      at_ += at_->span_;
      return *this;
    }
    friend bool operator==(const Iterator&, const Iterator&) = default;

   private:
    const JsonValue* at_;
  };
  Iterator begin() const { return Iterator(this + 1); }
  Iterator end() const { return Iterator(this + span_); }

 private:
  friend class JsonLineParser;

  /// With the length of `b` (a literal's, known where find inlines) memcmp is inlined too.
  static bool same_key(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), b.size()) == 0;
  }

  const JsonValue* found(const JsonValue* member) const {
    find_from_ = static_cast<std::uint32_t>(member + member->span_ - this);
    return member;
  }

  Kind kind_ = Kind::null;
  std::uint32_t size_ = 0;
  std::uint32_t span_ = 1;       ///< this value and its members, in tape slots
  std::uint64_t key_bits_ = 0;   ///< objects: one bit per member key (key_bit), for find()
  mutable std::uint32_t find_from_ = 1;  ///< objects: where the next find() starts
  std::string_view key_;
  std::string_view text_;
  union {
    bool boolean;
    std::uint64_t unsigned_int;
    std::int64_t negative_int;
    double real;
  } number_{.unsigned_int = 0};
};

/// Parses lines into a tape it reuses (so its storage is allocated once, not per line).
class JsonLineParser {
 public:
  /// Deeper lines go to nlohmann (ranklab writes 3 levels: line, compute, item).
  static constexpr int kMaxFastDepth = 8;

  /// The line's top-level object, or nullptr when `line` is not in the subset (parse it with
  /// nlohmann). Valid until the next parse(); its strings point into the parser's copy of
  /// `line`.
  const JsonValue* parse(std::string_view line);

 private:
  /// NULs after the copied line: the widest read past its end (the string scan's word).
  static constexpr std::size_t kPadding = 8;

  bool value(int depth);
  template <bool kObject>
  bool container(int depth);
  // Inlined into their one or two callers: a line has some 25 strings and 10 numbers.
  [[gnu::always_inline]] inline bool string(std::string_view& out);
  [[gnu::always_inline]] inline bool number(JsonValue& out);
  bool literal(std::string_view word);
  /// Inline: ranklab writes no whitespace, so this is one comparison per token.
  [[gnu::always_inline]] void skip_space() {
    while (static_cast<unsigned char>(*at_) <= ' ' &&
           (*at_ == ' ' || *at_ == '\t' || *at_ == '\r' || *at_ == '\n')) {
      ++at_;
    }
  }

  std::string line_;  ///< the line being parsed, then kPadding NULs
  std::vector<JsonValue> tape_;
  const char* at_ = nullptr;
  const char* end_ = nullptr;
};

}  // namespace ranklab::detail
