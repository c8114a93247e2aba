#include "traces/output_file.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>

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

/// Creates `path` as a new, empty regular file if nothing (not even a dangling link) is
/// there: true when this call created it. Whatever was there is left as it was.
bool create_new(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

/// Removes `path` after a failed write, only if this process created it and it is still a
/// regular file: a device node, a pipe, a link or a user's existing file given as an output
/// path is never deleted (as root, `--trace /dev/full` used to remove /dev/full).
void remove_created(const std::filesystem::path& path, bool created) {
  if (!created) return;
  std::error_code ignored;
  if (!std::filesystem::is_regular_file(std::filesystem::symlink_status(path, ignored))) return;
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
  const bool created = create_new(path);
  errno = 0;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    const int error = errno;
    remove_created(path, created);
    fail(path, what, error);
  }
  try {
    write(out);
  } catch (...) {
    out.close();
    remove_created(path, created);
    throw;
  }
  out.close();
  if (!out) {
    const int error = errno;
    remove_created(path, created);
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
  const bool created = create_new(path);
  errno = 0;
  std::ofstream probe(path, std::ios::binary | std::ios::app);
  if (!probe) {
    const int reason = errno;
    remove_created(path, created);
    fail(path, what, reason);
  }
  probe.close();
  remove_created(path, created);
}

}  // namespace ranklab
