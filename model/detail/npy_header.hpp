// Private to model/npy.cpp: the preamble and header dictionary of a .npy file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ranklab::detail {

/// The .npy magic string.
inline constexpr std::string_view kNpyMagic{"\x93NUMPY", 6};

/// The header dictionary, e.g. {'descr': '<f4', 'fortran_order': False, 'shape': (64, 32), }
struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<std::int64_t> shape;
  std::size_t data_offset = 0;
};

/// Checks the magic string and version (1.0 or 2.0) of a whole file's bytes and parses its
/// header; data_offset is where the data starts. Throws UsageError "PATH: reason".
NpyHeader parse_npy_header(const std::filesystem::path& path, std::span<const char> bytes);

}  // namespace ranklab::detail
