// What ranklab's pickle reader (traces/pickle_reader.hpp) and writer (traces/pickle_writer.hpp)
// share: the opcodes, named as in CPython's Lib/pickletools.py, and the UTF-8 check of a str.
// One copy, so the reader and the writer cannot disagree on a byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ranklab::detail::pickle {

enum Op : std::uint8_t {
  kMark = '(', kStop = '.', kPop = '0', kPopMark = '1', kNone = 'N', kBinInt = 'J',
  kBinInt1 = 'K', kBinInt2 = 'M', kBinFloat = 'G', kBinUnicode = 'X', kEmptyTuple = ')',
  kTuple = 't', kEmptyList = ']', kAppend = 'a', kAppends = 'e', kList = 'l', kEmptyDict = '}',
  kSetItem = 's', kSetItems = 'u', kDict = 'd', kBinPut = 'q', kLongBinPut = 'r', kBinGet = 'h',
  kLongBinGet = 'j', kGlobal = 'c', kReduce = 'R', kProto = 0x80, kTuple1 = 0x85,
  kTuple2 = 0x86, kTuple3 = 0x87, kNewTrue = 0x88, kNewFalse = 0x89, kLong1 = 0x8a,
  kShortBinUnicode = 0x8c, kBinUnicode8 = 0x8d, kMemoize = 0x94, kFrame = 0x95,
};

/// True if `s` is well-formed UTF-8 (no overlongs, no surrogates, at most U+10FFFF).
inline bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t extra = 0;
    std::uint32_t code = 0;
    if (c < 0x80) { ++i; continue; }
    if ((c & 0xe0) == 0xc0) { extra = 1; code = c & 0x1f; }
    else if ((c & 0xf0) == 0xe0) { extra = 2; code = c & 0x0f; }
    else if ((c & 0xf8) == 0xf0) { extra = 3; code = c & 0x07; }
    else return false;
    if (extra >= s.size() - i) return false;
    for (std::size_t k = 1; k <= extra; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xc0) != 0x80) return false;
      code = (code << 6) | (d & 0x3f);
    }
    static constexpr std::uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (code < kMin[extra] || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return false;
    i += extra + 1;
  }
  return true;
}

}  // namespace ranklab::detail::pickle
