#include "collectives/options.hpp"

#include <string>

#include "collectives/algorithms/registry.hpp"

namespace ranklab {

std::string_view to_string(Algorithm algorithm) {
  const auto rows = algorithm_rows();
  const auto index = static_cast<std::size_t>(algorithm);
  return index < rows.size() ? rows[index].name : "unknown";
}

std::optional<Algorithm> parse_algorithm(std::string_view name) {
  std::string dashed(name);
  for (char& c : dashed) c = c == '_' ? '-' : c;
  for (const AlgorithmRow& row : algorithm_rows()) {
    if (row.name == dashed) return row.algorithm;
  }
  return std::nullopt;
}

std::vector<std::string_view> algorithm_names() {
  std::vector<std::string_view> names;
  for (const AlgorithmRow& row : algorithm_rows()) {
    if (row.algorithm != Algorithm::automatic) names.push_back(row.name);
  }
  return names;
}

}  // namespace ranklab
