#include "model/detail/npy_header.hpp"

#include <fmt/format.h>

#include <limits>
#include <utility>

#include "model/detail/fail.hpp"

namespace ranklab::detail {

namespace {

// A recursive-descent reader for the one Python literal that np.save writes: a dict of
// string keys whose values are a string, a bool or a tuple of integers.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::filesystem::path& path)
      : text_(text), path_(path) {}

  NpyHeader parse() {
    NpyHeader header;
    bool seen[3] = {false, false, false};
    expect('{');
    while (!consume('}')) {
      const std::string key = parse_string();
      expect(':');
      if (key == "descr") {
        header.descr = parse_string();
        seen[0] = true;
      } else if (key == "fortran_order") {
        header.fortran_order = parse_bool();
        seen[1] = true;
      } else if (key == "shape") {
        header.shape = parse_tuple();
        seen[2] = true;
      } else {
        fail(path_, fmt::format("malformed header: unexpected key '{}'", key));
      }
      if (!consume(',')) {
        expect('}');
        break;
      }
    }
    const char* names[3] = {"descr", "fortran_order", "shape"};
    for (int k = 0; k < 3; ++k) {
      if (!seen[k]) fail(path_, fmt::format("malformed header: no '{}' key", names[k]));
    }
    return header;
  }

 private:
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
  }
  bool consume(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  [[noreturn]] void malformed(std::string_view wanted) const {
    fail(path_,
         fmt::format("malformed header: expected {} at offset {} of \"{}\"", wanted, pos_, text_));
  }
  void expect(char c) {
    if (!consume(c)) malformed(fmt::format("'{}'", c));
  }
  std::string parse_string() {
    skip_space();
    const char quote = pos_ < text_.size() ? text_[pos_] : '\0';
    if (quote != '\'' && quote != '"') malformed("a quoted string");
    const std::size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) malformed("a closing quote");
    std::string value(text_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return value;
  }
  bool parse_bool() {
    skip_space();
    for (const auto& [word, value] :
         {std::pair{std::string_view("True"), true}, std::pair{std::string_view("False"), false}}) {
      if (text_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return value;
      }
    }
    malformed("True or False");
  }
  std::vector<std::int64_t> parse_tuple() {
    std::vector<std::int64_t> values;
    expect('(');
    while (!consume(')')) {
      values.push_back(parse_dimension());
      if (!consume(',')) {
        expect(')');
        break;
      }
    }
    return values;
  }
  std::int64_t parse_dimension() {
    skip_space();
    std::int64_t value = 0;
    const std::size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      const int digit = text_[pos_++] - '0';
      if (value > (std::numeric_limits<std::int64_t>::max() - digit) / 10) {
        fail(path_, "malformed header: a shape dimension overflows 64 bits");
      }
      value = value * 10 + digit;
    }
    if (pos_ == start) malformed("a non-negative integer");
    if (pos_ < text_.size() && text_[pos_] == 'L') ++pos_;  // Python 2 long literals
    return value;
  }

  std::string_view text_;
  const std::filesystem::path& path_;
  std::size_t pos_ = 0;
};

std::uint32_t read_le(std::span<const char> bytes, std::size_t offset, std::size_t width) {
  std::uint32_t value = 0;
  for (std::size_t k = 0; k < width; ++k) {
    value |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[offset + k])) << (8 * k);
  }
  return value;
}

}  // namespace

// Magic string, version, header length and header dictionary.
NpyHeader parse_npy_header(const std::filesystem::path& path, std::span<const char> bytes) {
  if (bytes.size() < kNpyMagic.size() ||
      std::string_view(bytes.data(), kNpyMagic.size()) != kNpyMagic) {
    fail(path, "not a .npy file (bad magic string)");
  }
  if (bytes.size() < 10) fail(path, "file is truncated (no header)");
  const int major = static_cast<unsigned char>(bytes[6]);
  const int minor = static_cast<unsigned char>(bytes[7]);
  if ((major != 1 && major != 2) || minor != 0) {
    fail(path,
         fmt::format("unsupported .npy format version {}.{} (reads 1.0 and 2.0)", major, minor));
  }
  // Version 1.0 has a 2-byte header length, 2.0 a 4-byte one.
  const std::size_t width = major == 1 ? 2 : 4;
  if (bytes.size() < 8 + width) fail(path, "file is truncated (no header)");
  const std::size_t length = read_le(bytes, 8, width);
  const std::size_t start = 8 + width;
  if (bytes.size() - start < length) {
    fail(path, fmt::format("file is truncated (header of {} bytes, found {})", length,
                           bytes.size() - start));
  }
  NpyHeader header = HeaderParser(std::string_view(bytes.data() + start, length), path).parse();
  header.data_offset = start + length;
  return header;
}

}  // namespace ranklab::detail
