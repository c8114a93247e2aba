#include "cli/error_exit.hpp"

#include <cerrno>
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <system_error>

namespace ranklab::cli {

int report_error(const std::exception& error, std::ostream& err) {
  if (dynamic_cast<const std::logic_error*>(&error) != nullptr) {
    err << "ranklab: internal error: " << error.what() << " (a bug in ranklab)\n";
    return kExitInternalError;
  }
  err << "ranklab: error: " << error.what() << "\n";
  return 1;
}

int flush_standard_output(int code, std::ostream& err) {
  std::cout.flush();
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int error = errno;
  if (flushed && std::ferror(stdout) == 0 && std::cout.good()) return code;
  if (error == EPIPE) return code;
  err << "ranklab: error: cannot write the report to standard output";
  if (error != 0) err << " (" << std::generic_category().message(error) << ")";
  err << "\n";
  return 1;
}

}  // namespace ranklab::cli
