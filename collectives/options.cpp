#include "collectives/options.hpp"

#include <array>
#include <string>

namespace ranklab {
namespace {

constexpr std::array<std::string_view, 8> kAlgorithmNames = {
    "automatic", "direct",           "ring",          "tree",
    "recursive-doubling", "halving-doubling", "dissemination", "pairwise"};

}  // namespace

std::string_view to_string(Algorithm algorithm) {
  return kAlgorithmNames[static_cast<std::size_t>(algorithm)];
}

std::optional<Algorithm> parse_algorithm(std::string_view name) {
  std::string dashed(name);
  for (char& c : dashed) c = c == '_' ? '-' : c;
  for (std::size_t i = 0; i < kAlgorithmNames.size(); ++i) {
    if (kAlgorithmNames[i] == dashed) return static_cast<Algorithm>(i);
  }
  return std::nullopt;
}

}  // namespace ranklab
