// Runs the built `ranklab` binary as a user does, for the end-to-end CLI suites.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/support/temp_dir.hpp"

namespace ranklab::testing {

struct Result {
  int code = -1;
  std::string out;  ///< stdout
  std::string err;  ///< stderr
};

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// `'text'` for the shell.
inline std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// Runs `ranklab ARGS...` in `cwd` (a fresh temporary directory if empty).
inline Result ranklab(const std::vector<std::string>& args, const std::filesystem::path& cwd = {}) {
  TempDir scratch("ranklab_cli");
  const std::filesystem::path dir = cwd.empty() ? scratch.path() : cwd;
  std::string command = "cd " + quoted(dir.string()) + " && " + quoted(RANKLAB_BINARY);
  for (const auto& a : args) command += " " + quoted(a);
  const auto err_path = scratch / "stderr.txt";
  command += " 2>" + quoted(err_path.string());
  Result result;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.out.append(buffer, n);
  const int status = ::pclose(pipe);
  result.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.err = read_file(err_path);
  return result;
}

inline std::string show(const Result& r) {
  return "exit " + std::to_string(r.code) + "\n--- stdout\n" + r.out + "--- stderr\n" + r.err;
}

inline ::testing::AssertionResult has(const Result& r, const std::string& part) {
  if (r.out.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "stdout lacks\n  " << part << "\n" << show(r);
}

/// Bad input as every subcommand reports it: exit 1, nothing on stdout, and one stderr
/// line `ranklab: error: ...` that contains `message`.
inline void expect_usage_error(const Result& r, const std::string& message) {
  EXPECT_EQ(r.code, 1) << show(r);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.rfind("ranklab: error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(message), std::string::npos) << r.err << "\nexpected: " << message;
}

}  // namespace ranklab::testing
