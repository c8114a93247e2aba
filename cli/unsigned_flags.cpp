#include "cli/unsigned_flags.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>

namespace ranklab::cli {
namespace {

// CLI11's type name of every unsigned integral option (and of an optional of one).
constexpr std::string_view kUnsignedTypeName = "UINT";

const CLI::Validator& not_negative() {
  // An empty description keeps the type shown in --help as it was.
  static const CLI::Validator validator(
      [](std::string& value) -> std::string {
        const std::size_t first = value.find_first_not_of(" \t");
        if (first != std::string::npos && value[first] == '-') {
          return "must not be negative, got " + value;
        }
        // strtoull, as CLI11 reads the value, saturates: 99999999999999999999 ran as
        // 2^64 - 1 (a seed) or as a count too large to allocate.
        errno = 0;
        char* end = nullptr;
        (void)std::strtoull(value.c_str(), &end, 0);
        if (errno == ERANGE) {
          return fmt::format("must be at most {}, got {}",
                             std::numeric_limits<std::uint64_t>::max(), value);
        }
        return {};
      },
      "", "not-negative");
  return validator;
}

}  // namespace

void refuse_negative_unsigned(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    if (std::string_view(option->get_type_name()).starts_with(kUnsignedTypeName)) {
      option->check(not_negative());
    }
  }
  for (CLI::App* command : app.get_subcommands({})) refuse_negative_unsigned(*command);
}

}  // namespace ranklab::cli
