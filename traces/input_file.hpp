// Opening the files ranklab reads (traces, SimGrid TI files, topology files), with errors that
// name the file. Only files that end are read: a path naming a device (/dev/zero, /dev/urandom)
// or a folder is refused before a byte is read, since reading it would never finish or never
// fit in memory. A pipe is read (`ranklab stats <(zcat t.jsonl.gz)`): it ends when its writer does.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace ranklab {

/// `path` opened for reading. Throws TraceError "PATH: cannot open WHAT (reason)" when it
/// cannot be opened, "PATH: not a regular file (a DEVICE)" for a device, socket or folder.
std::ifstream open_input_file(const std::filesystem::path& path, std::string_view what);

/// The whole content of `path`, opened as open_input_file() opens it.
std::string read_input_file(const std::filesystem::path& path, std::string_view what);

/// The same, refusing a regular file over `max_bytes` before reading it ("PATH: N bytes is
/// more than WHAT ranklab reads (M at most)").
std::string read_input_file(const std::filesystem::path& path, std::string_view what,
                            std::uintmax_t max_bytes);

/// The files `inputs` name, for readers of formats that come as several files (one per rank):
/// a file as given; a folder as its regular files that `keep` accepts, by name (subfolders
/// are not read). Throws TraceError for a folder that cannot be listed or holds no such file
/// ("PATH: a folder without WHAT").
std::vector<std::filesystem::path> input_files(const std::vector<std::filesystem::path>& inputs,
                                               bool (*keep)(const std::filesystem::path&),
                                               std::string_view what);

}  // namespace ranklab
