// The expected.txt files of the shipped examples (traces/examples/nccl, nccl_ras): "exit N",
// "text: LINE" (a line the text report must hold) and "json: PATH VALUE" (with --json, the
// JSON VALUE at PATH, keys and list indices joined by dots); and the lookup of such a path.
#pragma once

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace ranklab::tools_testing {

struct ExpectedReport {
  int exit_code = -1;
  std::vector<std::string> lines;
  std::vector<std::pair<std::string, nlohmann::json>> values;  ///< (dotted path, value)
};

inline ExpectedReport read_expected_report(const std::filesystem::path& path) {
  std::ifstream in(path);
  ExpectedReport out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("exit ")) out.exit_code = std::stoi(line.substr(5));
    if (line.starts_with("text: ")) out.lines.push_back(line.substr(6));
    if (line.starts_with("json: ")) {
      const std::string rest = line.substr(6);
      const std::size_t space = rest.find(' ');
      out.values.emplace_back(rest.substr(0, space), nlohmann::json::parse(rest.substr(space + 1)));
    }
  }
  return out;
}

/// The value at a dotted path ("culprit.operations.0.site"), or null.
inline nlohmann::json at_path(const nlohmann::json& document, const std::string& path) {
  const nlohmann::json* node = &document;
  std::stringstream parts(path);
  std::string key;
  while (std::getline(parts, key, '.')) {
    if (node->is_array() && !key.empty() && std::all_of(key.begin(), key.end(), ::isdigit)) {
      const std::size_t index = std::stoul(key);
      if (index >= node->size()) return nullptr;
      node = &(*node)[index];
    } else if (node->is_object() && node->contains(key)) {
      node = &(*node)[key];
    } else {
      return nullptr;
    }
  }
  return *node;
}

}  // namespace ranklab::tools_testing
