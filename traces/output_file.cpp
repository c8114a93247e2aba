#include "traces/output_file.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <fstream>
#include <system_error>

#include "traces/error.hpp"

namespace ranklab {
namespace {

[[noreturn]] void fail(const std::filesystem::path& path, std::string_view what, int error) {
  const std::string reason =
      error == 0 ? std::string("unknown error") : std::generic_category().message(error);
  throw TraceError(fmt::format("{}: cannot write {} ({})", path.string(), what, reason));
}

void remove_quietly(const std::filesystem::path& path) {
  std::error_code ignored;
  std::filesystem::remove(path, ignored);
}

/// Creates `folder` and the folders above it; a failure names `named`.
void create_folders(const std::filesystem::path& folder, const std::filesystem::path& named,
                    std::string_view what) {
  if (folder.empty()) return;  // the working directory
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (error) fail(named, what, error.value());
}

}  // namespace

void write_output_file(const std::filesystem::path& path, std::string_view what,
                       const std::function<void(std::ostream&)>& write) {
  errno = 0;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) fail(path, what, errno);  // nothing created: leave whatever is there alone
  try {
    write(out);
  } catch (...) {
    out.close();
    remove_quietly(path);
    throw;
  }
  out.close();
  if (!out) {
    const int error = errno;
    remove_quietly(path);
    fail(path, what, error);
  }
}

void create_output_folder(const std::filesystem::path& folder, std::string_view what) {
  create_folders(folder, folder, what);
}

void require_writable_output(const std::filesystem::path& path, std::string_view what) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) fail(path, what, EISDIR);
  create_folders(path.parent_path(), path, what);
  const bool existed = std::filesystem::exists(path, error);
  errno = 0;
  std::ofstream probe(path, std::ios::binary | std::ios::app);
  if (!probe) fail(path, what, errno);
  probe.close();
  if (!existed) remove_quietly(path);
}

}  // namespace ranklab
