#include "cli/error_exit.hpp"

#include <stdexcept>

namespace ranklab::cli {

int report_error(const std::exception& error, std::ostream& err) {
  if (dynamic_cast<const std::logic_error*>(&error) != nullptr) {
    err << "ranklab: internal error: " << error.what() << " (a bug in ranklab)\n";
    return kExitInternalError;
  }
  err << "ranklab: error: " << error.what() << "\n";
  return 1;
}

}  // namespace ranklab::cli
