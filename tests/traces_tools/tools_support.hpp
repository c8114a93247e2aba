// Shared by the trace-tools tests: the committed example traces.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "traces/jsonl.hpp"

namespace ranklab::tools_testing {

inline std::filesystem::path examples_dir() {
  return std::filesystem::path(RANKLAB_SOURCE_DIR) / "traces" / "examples";
}

/// Every committed example trace, sorted by name.
inline std::vector<std::filesystem::path> example_files() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(examples_dir())) {
    if (entry.path().extension() == ".jsonl") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

inline Trace read_example(const std::string& name) {
  return read_trace_file(examples_dir() / name);
}

}  // namespace ranklab::tools_testing
