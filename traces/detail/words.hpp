// The whitespace-separated words of a line, for the readers of word-based formats (SimGrid
// TI) and the fuzzers' mutators of them. Private to traces/.
#pragma once

#include <cctype>
#include <string_view>
#include <vector>

namespace ranklab::detail {

/// The words of `line`, as views into it.
inline std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    const std::size_t start = i;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i > start) words.push_back(line.substr(start, i - start));
  }
  return words;
}

}  // namespace ranklab::detail
