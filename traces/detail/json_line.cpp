#include "traces/detail/json_line.hpp"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

namespace ranklab::detail {
namespace {

/// One of 64 bits for a key: an object's keys' bits answer most finds of an absent key
/// (the reader asks for a dozen optional fields a line seldom has) without a comparison.
std::uint64_t key_bit(std::string_view key) {
  if (key.empty()) return 1;
  const auto first = static_cast<unsigned char>(key.front());
  const auto last = static_cast<unsigned char>(key.back());
  return std::uint64_t{1} << ((key.size() * 7 + first + last * 3) & 63);
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

template <>
bool JsonValue::get<bool>() const {
  return number_.boolean;
}

template <>
std::uint64_t JsonValue::get<std::uint64_t>() const {
  if (kind_ == Kind::negative_int) return static_cast<std::uint64_t>(number_.negative_int);
  if (kind_ == Kind::real) return static_cast<std::uint64_t>(number_.real);
  return number_.unsigned_int;
}

template <>
std::int64_t JsonValue::get<std::int64_t>() const {
  if (kind_ == Kind::unsigned_int) return static_cast<std::int64_t>(number_.unsigned_int);
  if (kind_ == Kind::real) return static_cast<std::int64_t>(number_.real);
  return number_.negative_int;
}

template <>
double JsonValue::get<double>() const {
  if (kind_ == Kind::unsigned_int) return static_cast<double>(number_.unsigned_int);
  if (kind_ == Kind::negative_int) return static_cast<double>(number_.negative_int);
  return number_.real;
}

const JsonValue& JsonValue::operator[](std::size_t index) const {
  Iterator it = begin();
  for (std::size_t i = 0; i < index; ++i) ++it;
  return *it;
}

namespace {

/// Keys are a few bytes: a loop the compiler inlines beats a call to memcmp.
bool same_key(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

}  // namespace

const JsonValue* JsonValue::find(std::string_view key) const {
  if (kind_ != Kind::object || (key_bits_ & key_bit(key)) == 0) return nullptr;
  // From the member after the last one found, round: the reader asks for fields in about
  // the order ranklab writes them, so most finds compare one key.
  const JsonValue* first = this + 1;
  const JsonValue* last = this + span_;
  const JsonValue* start = this + find_from_;
  for (const JsonValue* member = start; member != last; member += member->span_) {
    if (same_key(member->key_, key)) {
      find_from_ = static_cast<std::uint32_t>(member + member->span_ - this);
      return member;
    }
  }
  for (const JsonValue* member = first; member != start; member += member->span_) {
    if (same_key(member->key_, key)) {
      find_from_ = static_cast<std::uint32_t>(member + member->span_ - this);
      return member;
    }
  }
  return nullptr;
}

const JsonValue* JsonLineParser::parse(std::string_view line) {
  tape_.clear();
  at_ = line.data();
  end_ = line.data() + line.size();
  skip_space();
  if (at_ == end_ || *at_ != '{' || !value(0)) return nullptr;
  skip_space();
  return at_ == end_ ? tape_.data() : nullptr;
}

void JsonLineParser::skip_space() {
  while (at_ != end_ && (*at_ == ' ' || *at_ == '\t' || *at_ == '\r' || *at_ == '\n')) ++at_;
}

bool JsonLineParser::value(int depth) {
  if (at_ == end_) return false;
  const char c = *at_;
  if (c == '{' || c == '[') return container(depth, c == '{');
  if (c == '"') {
    std::string_view text;
    if (!string(text)) return false;
    JsonValue& out = tape_.emplace_back();
    out.kind_ = JsonValue::Kind::string;
    out.text_ = text;
    return true;
  }
  if (c == '-' || is_digit(c)) return number(tape_.emplace_back());
  const char* start = at_;
  JsonValue value;
  if (c == 't' && literal("true")) {
    value.kind_ = JsonValue::Kind::boolean;
    value.number_.boolean = true;
  } else if (c == 'f' && literal("false")) {
    value.kind_ = JsonValue::Kind::boolean;
    value.number_.boolean = false;
  } else if (c == 'n' && literal("null")) {
    value.kind_ = JsonValue::Kind::null;
  } else {
    return false;
  }
  value.text_ = std::string_view(start, static_cast<std::size_t>(at_ - start));
  tape_.push_back(value);
  return true;
}

bool JsonLineParser::container(int depth, bool object) {
  if (depth >= kMaxFastDepth) return false;
  const std::size_t slot = tape_.size();
  const char* start = at_;
  tape_.emplace_back().kind_ = object ? JsonValue::Kind::object : JsonValue::Kind::array;
  ++at_;  // '{' or '['
  skip_space();
  const char close = object ? '}' : ']';
  std::uint32_t size = 0;
  std::uint64_t key_bits = 0;
  if (at_ != end_ && *at_ == close) {
    ++at_;
  } else {
    while (true) {
      std::string_view key;
      if (object) {
        if (at_ == end_ || *at_ != '"' || !string(key)) return false;
        const std::uint64_t bit = key_bit(key);
        if ((key_bits & bit) != 0) {
          // Maybe a repeated key, which nlohmann resolves (the last one wins): its call.
          for (std::size_t i = slot + 1; i < tape_.size(); i += tape_[i].span_) {
            if (tape_[i].key_ == key) return false;
          }
        }
        key_bits |= bit;
        skip_space();
        if (at_ == end_ || *at_ != ':') return false;
        ++at_;
        skip_space();
      }
      const std::size_t member = tape_.size();
      if (!value(depth + 1)) return false;
      tape_[member].key_ = key;
      ++size;
      skip_space();
      if (at_ == end_) return false;
      if (*at_ == ',') {
        ++at_;
        skip_space();
        continue;
      }
      if (*at_ != close) return false;
      ++at_;
      break;
    }
  }
  JsonValue& node = tape_[slot];
  node.size_ = size;
  node.span_ = static_cast<std::uint32_t>(tape_.size() - slot);
  node.key_bits_ = key_bits;
  node.find_from_ = 1;
  node.text_ = std::string_view(start, static_cast<std::size_t>(at_ - start));
  return true;
}

/// A string at `at_` (on its opening quote) of bytes 0x20-0x7e without a backslash.
bool JsonLineParser::string(std::string_view& out) {
  const char* start = ++at_;
  while (at_ != end_) {
    const auto c = static_cast<unsigned char>(*at_);
    if (c == '"') {
      out = std::string_view(start, static_cast<std::size_t>(at_ - start));
      ++at_;
      return true;
    }
    if (c < 0x20 || c > 0x7e || c == '\\') return false;
    ++at_;
  }
  return false;
}

/// A JSON number into `out`, typed as nlohmann types it: an integer literal without '-'
/// is unsigned, with '-' signed (so "-0" is a signed 0), anything with a fraction or an
/// exponent a double. Integers that overflow their type (nlohmann makes them doubles) and
/// doubles out of range are left to nlohmann.
bool JsonLineParser::number(JsonValue& out) {
  const char* start = at_;
  const bool negative = *at_ == '-';
  if (negative) ++at_;
  if (at_ == end_ || !is_digit(*at_)) return false;
  std::uint64_t magnitude = 0;
  if (*at_ == '0') {
    ++at_;
    if (at_ != end_ && is_digit(*at_)) return false;  // a leading zero: not JSON
  } else {
    constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
    while (at_ != end_ && is_digit(*at_)) {
      const auto digit = static_cast<std::uint64_t>(*at_ - '0');
      if (magnitude > (kMax - digit) / 10) return false;
      magnitude = magnitude * 10 + digit;
      ++at_;
    }
  }
  const bool fraction = at_ != end_ && *at_ == '.';
  if (fraction) {
    ++at_;
    if (at_ == end_ || !is_digit(*at_)) return false;
    while (at_ != end_ && is_digit(*at_)) ++at_;
  }
  const bool exponent = at_ != end_ && (*at_ == 'e' || *at_ == 'E');
  if (exponent) {
    ++at_;
    if (at_ != end_ && (*at_ == '+' || *at_ == '-')) ++at_;
    if (at_ == end_ || !is_digit(*at_)) return false;
    while (at_ != end_ && is_digit(*at_)) ++at_;
  }
  out.text_ = std::string_view(start, static_cast<std::size_t>(at_ - start));
  if (fraction || exponent) {
    double real = 0;
    // from_chars rounds correctly, as glibc's strtod (nlohmann's) does; what it reports
    // out of range (strtod's infinity, or a value too small, which strtod makes 0) is
    // left to nlohmann, which rejects the one and accepts the other.
    const auto [stop, error] = std::from_chars(start, at_, real);
    if (error != std::errc() || stop != at_ || !std::isfinite(real)) return false;
    out.kind_ = JsonValue::Kind::real;
    out.number_.real = real;
    return true;
  }
  if (!negative) {
    out.kind_ = JsonValue::Kind::unsigned_int;
    out.number_.unsigned_int = magnitude;
    return true;
  }
  constexpr auto kMinMagnitude = std::uint64_t{1} << 63;  // |INT64_MIN|
  if (magnitude > kMinMagnitude) return false;
  out.kind_ = JsonValue::Kind::negative_int;
  out.number_.negative_int =
      magnitude == kMinMagnitude ? std::numeric_limits<std::int64_t>::min()
                                 : -static_cast<std::int64_t>(magnitude);
  return true;
}

bool JsonLineParser::literal(std::string_view word) {
  if (static_cast<std::size_t>(end_ - at_) < word.size() ||
      std::memcmp(at_, word.data(), word.size()) != 0) {
    return false;
  }
  at_ += word.size();
  return true;
}

}  // namespace ranklab::detail
