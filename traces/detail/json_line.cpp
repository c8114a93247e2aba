#include "traces/detail/json_line.hpp"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

namespace ranklab::detail {
namespace {

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

const JsonValue* JsonLineParser::parse(std::string_view line) {
  // A copy ending in NULs, so no token needs a bounds check: a NUL stops every loop (it is
  // no JSON token, and strings refuse it), and the eight-byte string scan stays inside.
  line_.assign(line.data(), line.size());
  line_.append(kPadding, '\0');
  tape_.clear();
  at_ = line_.data();
  end_ = at_ + line.size();
  skip_space();
  if (*at_ != '{' || !value(0)) return nullptr;
  skip_space();
  return at_ == end_ ? tape_.data() : nullptr;
}

bool JsonLineParser::value(int depth) {
  switch (*at_) {
    case '{':
      return container<true>(depth);
    case '[':
      return container<false>(depth);
    case '"': {
      JsonValue& out = tape_.emplace_back();
      out.kind_ = JsonValue::Kind::string;
      return string(out.text_);
    }
    case '-':
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9':
      return number(tape_.emplace_back());
    default:
      break;
  }
  const char* start = at_;
  JsonValue value;
  if (literal("true")) {
    value.kind_ = JsonValue::Kind::boolean;
    value.number_.boolean = true;
  } else if (literal("false")) {
    value.kind_ = JsonValue::Kind::boolean;
    value.number_.boolean = false;
  } else if (literal("null")) {
    value.kind_ = JsonValue::Kind::null;
  } else {
    return false;
  }
  value.text_ = std::string_view(start, static_cast<std::size_t>(at_ - start));
  tape_.push_back(value);
  return true;
}

template <bool kObject>
bool JsonLineParser::container(int depth) {
  if (depth >= kMaxFastDepth) return false;
  const std::size_t slot = tape_.size();
  const char* start = at_;
  tape_.emplace_back().kind_ = kObject ? JsonValue::Kind::object : JsonValue::Kind::array;
  ++at_;  // '{' or '['
  skip_space();
  constexpr char kClose = kObject ? '}' : ']';
  std::uint32_t size = 0;
  std::uint64_t key_bits = 0;
  if (*at_ == kClose) {
    ++at_;
  } else {
    while (true) {
      std::string_view key;
      if constexpr (kObject) {
        if (*at_ != '"' || !string(key)) return false;
        const std::uint64_t bit = JsonValue::key_bit(key);
        if ((key_bits & bit) != 0) {
          // Maybe a repeated key, which nlohmann resolves (the last one wins): its call.
          for (std::size_t i = slot + 1; i < tape_.size(); i += tape_[i].span_) {
            if (tape_[i].key_ == key) return false;
          }
        }
        key_bits |= bit;
        skip_space();
        if (*at_ != ':') return false;
        ++at_;
        skip_space();
      }
      const std::size_t member = tape_.size();
      if (!value(depth + 1)) return false;
      if constexpr (kObject) tape_[member].key_ = key;
      ++size;
      skip_space();
      if (*at_ == ',') {
        ++at_;
        skip_space();
        continue;
      }
      if (*at_ != kClose) return false;
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
/// Eight bytes at a time: a string of the subset holds none of '"', '\\', a control byte
/// (the padding's NUL among them) or a byte >= 0x7f, which one word's bit tests find.
bool JsonLineParser::string(std::string_view& out) {
  const char* start = ++at_;
  if constexpr (std::endian::native == std::endian::little) {
    while (true) {
      std::uint64_t word;
      std::memcpy(&word, at_, sizeof word);  // within the padding: at_ <= end_
      if (const std::uint64_t special = unplain_bytes(word); special != 0) {
        // The first byte flagged ends the string if it is the quote, and the line's fast
        // parse if not.
        at_ += __builtin_ctzll(special) / 8;
        break;
      }
      at_ += 8;
    }
  } else {
    while (*at_ >= 0x20 && *at_ <= 0x7e && *at_ != '"' && *at_ != '\\') ++at_;
  }
  if (*at_ != '"' || at_ >= end_) return false;
  out = std::string_view(start, static_cast<std::size_t>(at_ - start));
  ++at_;
  return true;
}

/// A JSON number into `out`, typed as nlohmann types it: an integer literal without '-'
/// is unsigned, with '-' signed (so "-0" is a signed 0), anything with a fraction or an
/// exponent a double. Integers that overflow their type (nlohmann makes them doubles) and
/// doubles out of range are left to nlohmann.
bool JsonLineParser::number(JsonValue& out) {
  const char* start = at_;
  const bool negative = *at_ == '-';
  if (negative) ++at_;
  if (!is_digit(*at_)) return false;
  std::uint64_t magnitude = 0;
  if (*at_ == '0') {
    ++at_;
    if (is_digit(*at_)) return false;  // a leading zero: not JSON
  } else {
    // Up to 19 digits cannot overflow: only a 20th is checked.
    constexpr int kSafeDigits = 19;
    const char* digits = at_;
    while (is_digit(*at_) && at_ - digits < kSafeDigits) {
      magnitude = magnitude * 10 + static_cast<std::uint64_t>(*at_ - '0');
      ++at_;
    }
    constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
    while (is_digit(*at_)) {
      const auto digit = static_cast<std::uint64_t>(*at_ - '0');
      if (magnitude > (kMax - digit) / 10) return false;
      magnitude = magnitude * 10 + digit;
      ++at_;
    }
  }
  const bool fraction = *at_ == '.';
  if (fraction) {
    ++at_;
    if (!is_digit(*at_)) return false;
    while (is_digit(*at_)) ++at_;
  }
  const bool exponent = *at_ == 'e' || *at_ == 'E';
  if (exponent) {
    ++at_;
    if (*at_ == '+' || *at_ == '-') ++at_;
    if (!is_digit(*at_)) return false;
    while (is_digit(*at_)) ++at_;
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
  // The padding holds more bytes than the longest word: the comparison stays inside.
  if (std::memcmp(at_, word.data(), word.size()) != 0) return false;
  at_ += word.size();
  return true;
}

}  // namespace ranklab::detail
