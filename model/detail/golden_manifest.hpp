// Private helpers shared by golden.cpp (load) and golden_save.cpp (save): the manifest.json
// keys, the dtype names and file names of a golden set.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "model/detail/fail.hpp"
#include "model/golden.hpp"

namespace ranklab::detail {

using Json = nlohmann::ordered_json;

/// manifest.json "format", the same string parallel_reference.py writes.
inline constexpr const char* kGoldenFormat =
    "parallel_reference golden data, version 1 (NumPy .npy, little endian, C order)";

/// The manifest's dtype name and the file-name suffix of Scalar.
template <typename Scalar>
struct DtypeNames;
template <>
struct DtypeNames<float> {
  static constexpr const char* dtype = "float32";
  static constexpr const char* suffix = "f32";
};
template <>
struct DtypeNames<double> {
  static constexpr const char* dtype = "float64";
  static constexpr const char* suffix = "f64";
};

/// "STEM.SUFFIX.npy", e.g. file_name("layer0.w1", "f32") = "layer0.w1.f32.npy".
std::string file_name(std::string_view stem, std::string_view suffix);

/// object[key], or a UsageError naming the manifest and the dotted key (parent + key).
const Json& member(const Json& object, const char* key, const std::filesystem::path& manifest,
                   std::string_view parent = "");

/// Parses manifest.json; a missing file or invalid JSON is a UsageError naming the path.
Json read_manifest(const std::filesystem::path& manifest);

/// The "config" object, checked (positive sizes and parallel degrees).
GoldenConfig parse_config(const Json& manifest, const std::filesystem::path& path);

/// The "config" object for a config and its dtype names, as parallel_reference.py writes it.
Json config_to_json(const GoldenConfig& config, const Json& dtypes);

}  // namespace ranklab::detail
