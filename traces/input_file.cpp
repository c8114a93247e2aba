#include "traces/input_file.hpp"

#include <fmt/format.h>

#include <algorithm>
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

std::string read_input_file(const std::filesystem::path& path, std::string_view what,
                            std::uintmax_t max_bytes) {
  // A regular file's size is known before reading; the rest (a device, a folder) is refused
  // by open_input_file, as for every other input.
  std::error_code error;
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (!error && size > max_bytes) {
    throw TraceError(fmt::format("{}: {} bytes is more than {} ranklab reads ({} at most)",
                                 path.string(), size, what, max_bytes));
  }
  return read_input_file(path, what);
}

std::vector<std::filesystem::path> input_files(const std::vector<std::filesystem::path>& inputs,
                                               bool (*keep)(const std::filesystem::path&),
                                               std::string_view what) {
  std::vector<std::filesystem::path> paths;
  for (const auto& input : inputs) {
    std::error_code error;
    if (!std::filesystem::is_directory(input, error)) {
      paths.push_back(input);
      continue;
    }
    std::vector<std::filesystem::path> inside;
    for (const auto& item : std::filesystem::directory_iterator(input, error)) {
      if (item.is_regular_file() && keep(item.path())) inside.push_back(item.path());
    }
    if (error) throw TraceError(fmt::format("{}: cannot list: {}", input.string(), error.message()));
    if (inside.empty()) throw TraceError(fmt::format("{}: a folder without {}", input.string(), what));
    std::sort(inside.begin(), inside.end());
    paths.insert(paths.end(), inside.begin(), inside.end());
  }
  return paths;
}

}  // namespace ranklab
