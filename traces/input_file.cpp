#include "traces/input_file.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <sstream>
#include <system_error>

#include "traces/error.hpp"

namespace ranklab {
namespace {

/// What a file that is neither regular nor a pipe is, for the error; nullptr if it may be read.
const char* refused_kind(std::filesystem::file_type type) {
  using std::filesystem::file_type;
  switch (type) {
    case file_type::directory: return "a directory";
    case file_type::character: return "a character device";
    case file_type::block: return "a block device";
    case file_type::socket: return "a socket";
    default: return nullptr;  // regular, a pipe, or missing (opening it says why)
  }
}

}  // namespace

std::ifstream open_input_file(const std::filesystem::path& path, std::string_view what) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (const char* kind = refused_kind(status.type())) {
    throw TraceError(fmt::format("{}: not a regular file ({})", path.string(), kind));
  }
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int error = errno;
    throw TraceError(fmt::format(
        "{}: cannot open {} ({})", path.string(), what,
        error == 0 ? std::string("unknown error") : std::generic_category().message(error)));
  }
  return in;
}

std::string read_input_file(const std::filesystem::path& path, std::string_view what) {
  std::ifstream in = open_input_file(path, what);
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw TraceError(fmt::format("{}: error reading {}", path.string(), what));
  return text.str();
}

}  // namespace ranklab
