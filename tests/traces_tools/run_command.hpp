// Runs a shell command for the end-to-end tests and captures its exit code, stdout and
// stderr (through files, so large outputs cannot block a pipe).
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "tests/support/temp_dir.hpp"

namespace ranklab::tools_testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// `report` without its "time: ..." lines (a replay's wall-clock time), to compare two runs.
inline std::string without_timing(const std::string& report) {
  std::istringstream in(report);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("time: ")) out += line + "\n";
  }
  return out;
}

/// Runs `command` with /bin/sh; a signal death reads as exit code 128 + signal.
inline CommandResult run_command(const std::string& command) {
  testing::TempDir dir("ranklab_cmd");
  const std::string full =
      command + " >'" + (dir / "out").string() + "' 2>'" + (dir / "err").string() + "'";
  const int status = std::system(full.c_str());
  CommandResult result;
  if (status != -1 && WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (status != -1 && WIFSIGNALED(status)) {
    result.exit_code = 128 + WTERMSIG(status);
  }
  result.out = read_text(dir / "out");
  result.err = read_text(dir / "err");
  return result;
}

#ifdef RANKLAB_BINARY
/// Runs the `ranklab` command under test with `args` (already quoted for /bin/sh).
inline CommandResult run_ranklab(const std::string& args) {
  return run_command(std::string("'") + RANKLAB_BINARY + "' " + args);
}
#endif

/// `path` quoted for /bin/sh.
inline std::string shell_quoted(const std::filesystem::path& path) {
  return "'" + path.string() + "'";
}

}  // namespace ranklab::tools_testing
