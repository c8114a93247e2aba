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
#include <string_view>
#include <vector>

namespace ranklab::detail {

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

  /// An object's member named `key`; nullptr if it has none.
  const JsonValue* find(std::string_view key) const;

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
  /// nlohmann). Valid until the next parse(); it points into `line`, which must outlive it.
  const JsonValue* parse(std::string_view line);

 private:
  bool value(int depth);
  bool container(int depth, bool object);
  bool string(std::string_view& out);
  bool number(JsonValue& out);
  bool literal(std::string_view word);
  void skip_space();

  std::vector<JsonValue> tape_;
  const char* at_ = nullptr;
  const char* end_ = nullptr;
};

}  // namespace ranklab::detail
