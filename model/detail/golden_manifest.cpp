#include "model/detail/golden_manifest.hpp"

#include <fmt/format.h>

#include <fstream>

#include "traces/error.hpp"

namespace ranklab::detail {

namespace fs = std::filesystem;

std::string file_name(std::string_view stem, std::string_view suffix) {
  return fmt::format("{}.{}.npy", stem, suffix);
}

const Json& member(const Json& object, const char* key, const fs::path& manifest,
                   std::string_view parent) {
  if (!object.is_object() || !object.contains(key)) {
    fail(manifest, fmt::format("manifest has no '{}{}'", parent, key));
  }
  return object.at(key);
}

Json read_manifest(const fs::path& manifest) {
  std::ifstream in(manifest);
  if (!in) {
    fail(manifest, fs::exists(manifest) ? "cannot open for reading"
                                        : "no such file (not a golden directory?)");
  }
  try {
    return Json::parse(in);
  } catch (const Json::exception& error) {
    fail(manifest, fmt::format("invalid JSON: {}", error.what()));
  }
}

GoldenConfig parse_config(const Json& manifest, const fs::path& path) {
  const Json& config = member(manifest, "config", path);
  const auto get = [&](const char* key) {
    const Json& value = member(config, key, path, "config.");
    if (!value.is_number_integer()) fail(path, fmt::format("'config.{}' is not an integer", key));
    return value.get<std::int64_t>();
  };
  GoldenConfig out;
  out.tp = static_cast<int>(get("tp"));
  out.pp = static_cast<int>(get("pp"));
  out.dp = static_cast<int>(get("dp"));
  out.shape = {get("batch"), get("seq"), get("hidden"), get("inter"), get("layers")};
  if (config.contains("seed")) out.seed = static_cast<std::uint64_t>(get("seed"));
  try {
    out.shape.validate();
  } catch (const UsageError& error) {
    fail(path, error.what());
  }
  if (out.tp <= 0 || out.pp <= 0 || out.dp <= 0) {
    fail(path, fmt::format("config has tp={} pp={} dp={}; each must be positive", out.tp, out.pp,
                           out.dp));
  }
  return out;
}

Json config_to_json(const GoldenConfig& config, const Json& dtypes) {
  const ModelShape& s = config.shape;
  return Json{{"tp", config.tp},    {"pp", config.pp},
              {"dp", config.dp},    {"world_size", config.tp * config.pp * config.dp},
              {"batch", s.batch},   {"seq", s.seq},
              {"hidden", s.hidden}, {"inter", s.inter},
              {"layers", s.layers}, {"seed", config.seed},
              {"dtypes", dtypes}};
}

}  // namespace ranklab::detail
