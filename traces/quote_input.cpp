#include "traces/quote_input.hpp"

#include <fmt/format.h>

namespace ranklab {
namespace {

bool is_continuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary.
std::string_view cut(std::string_view text, std::size_t max) {
  if (text.size() <= max) return text;
  std::size_t end = max;
  while (end > 0 && is_continuation(static_cast<unsigned char>(text[end]))) --end;
  return text.substr(0, end);
}

std::string escaped(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      out += fmt::format("\\x{:02x}", byte);
    } else {
      out += c;
    }
  }
  return out;
}

std::string suffix(std::string_view text, std::size_t shown) {
  return shown == text.size() ? std::string() : fmt::format("... ({} bytes)", text.size());
}

}  // namespace

std::string excerpt(std::string_view text, std::size_t max) {
  const std::string_view shown = cut(text, max);
  return escaped(shown) + suffix(text, shown.size());
}

std::string quote_input(std::string_view text) {
  const std::string_view shown = cut(text, kQuotedBytes);
  return "'" + escaped(shown) + "'" + suffix(text, shown.size());
}

}  // namespace ranklab
