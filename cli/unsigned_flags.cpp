#include "cli/unsigned_flags.hpp"

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
