#include "model/golden.hpp"

#include <fmt/format.h>

#include <set>
#include <string>

#include "model/detail/golden_manifest.hpp"
#include "model/npy.hpp"

namespace ranklab {

namespace {

namespace fs = std::filesystem;
using detail::DtypeNames;
using detail::fail;
using detail::file_name;
using detail::Json;
using detail::member;

// The four tensors STEM.{w1,b1,w2,b2}.SFX.npy of one layer (or of its gradient or shard).
template <typename Scalar>
LayerParams<Scalar> load_layer(const fs::path& dir, std::string_view stem, std::int64_t hidden,
                               std::int64_t inter) {
  const auto path = [&](const char* name) {
    return dir / file_name(fmt::format("{}.{}", stem, name), DtypeNames<Scalar>::suffix);
  };
  const std::int64_t w1_shape[] = {inter, hidden};
  const std::int64_t w2_shape[] = {hidden, inter};
  return {read_npy_matrix<Scalar>(path("w1"), w1_shape), read_npy_vector<Scalar>(path("b1"), inter),
          read_npy_matrix<Scalar>(path("w2"), w2_shape),
          read_npy_vector<Scalar>(path("b2"), hidden)};
}

int int_of(const Json& info, const char* key, const fs::path& path) {
  const Json& value = member(info, key, path, "ranks[].");
  if (!value.is_number_integer()) fail(path, fmt::format("'ranks[].{}' is not an integer", key));
  return value.get<int>();
}

// The hybrid run's per-rank gradients, as the manifest's "ranks" table describes them.
template <typename Scalar>
std::vector<GoldenRankGrads<Scalar>> load_hybrid_grads(const fs::path& dir, const Json& manifest,
                                                       const fs::path& path, std::int64_t hidden) {
  std::vector<GoldenRankGrads<Scalar>> out;
  for (const Json& info : member(manifest, "ranks", path)) {
    GoldenRankGrads<Scalar> rank;
    rank.rank = int_of(info, "rank", path);
    rank.d = int_of(info, "d", path);
    rank.p = int_of(info, "p", path);
    rank.t = int_of(info, "t", path);
    const auto rows = member(info, "w1_rows", path, "ranks[].").get<std::vector<std::int64_t>>();
    if (rows.size() != 2 || rows[0] < 0 || rows[1] <= rows[0]) {
      fail(path, fmt::format("rank {}: w1_rows must be [first, end) with first < end", rank.rank));
    }
    rank.first = rows[0];
    rank.end = rows[1];
    rank.layers = member(info, "layers", path, "ranks[].").get<std::vector<std::int64_t>>();
    for (const std::int64_t layer : rank.layers) {
      rank.grads.push_back(
          load_layer<Scalar>(dir, fmt::format("hybrid.rank{}.grad.layer{}", rank.rank, layer),
                             hidden, rank.end - rank.first));
    }
    out.push_back(std::move(rank));
  }
  return out;
}

// The names manifest.json lists under "files".
std::set<std::string> listed_files(const Json& manifest) {
  std::set<std::string> names;
  if (manifest.contains("files")) {
    for (const Json& file : manifest.at("files")) {
      if (file.contains("name")) names.insert(file.at("name").get<std::string>());
    }
  }
  return names;
}

// Reads the manifest and checks that it has Scalar's dtype; JSON type errors get the path.
template <typename Scalar>
Json load_manifest(const fs::path& path, GoldenConfig& config) {
  try {
    Json manifest = detail::read_manifest(path);
    config = detail::parse_config(manifest, path);
    const Json& suffixes = member(manifest, "file_suffix", path);
    if (!suffixes.contains(DtypeNames<Scalar>::dtype)) {
      fail(path, fmt::format("the set holds no {} data (file_suffix: {})",
                             DtypeNames<Scalar>::dtype, suffixes.dump()));
    }
    return manifest;
  } catch (const Json::exception& error) {
    fail(path, fmt::format("bad manifest: {}", error.what()));
  }
}

}  // namespace

GoldenInfo read_golden_info(const fs::path& directory) {
  if (!fs::is_directory(directory)) fail(directory, "no such directory");
  const fs::path path = directory / "manifest.json";
  try {
    const Json manifest = detail::read_manifest(path);
    GoldenInfo info{.config = detail::parse_config(manifest, path)};
    const Json& suffixes = member(manifest, "file_suffix", path);
    info.has_float32 = suffixes.contains(DtypeNames<float>::dtype);
    info.has_float64 = suffixes.contains(DtypeNames<double>::dtype);
    return info;
  } catch (const Json::exception& error) {
    fail(path, fmt::format("bad manifest: {}", error.what()));
  }
}

template <typename Scalar>
GoldenSet<Scalar> load_golden(const fs::path& directory) {
  if (!fs::is_directory(directory)) fail(directory, "no such directory");
  const fs::path path = directory / "manifest.json";
  GoldenSet<Scalar> set;
  const Json manifest = load_manifest<Scalar>(path, set.config);
  const ModelShape& shape = set.config.shape;
  const char* sfx = DtypeNames<Scalar>::suffix;
  const std::set<std::string> listed = listed_files(manifest);
  const auto file = [&](const std::string& stem) { return directory / file_name(stem, sfx); };
  const auto has = [&](const std::string& stem) { return listed.contains(file_name(stem, sfx)); };
  const std::int64_t activation[] = {shape.batch, shape.seq, shape.hidden};
  const std::int64_t per_replica[] = {set.config.dp};

  for (std::int64_t l = 0; l < shape.layers; ++l) {
    set.layers.push_back(
        load_layer<Scalar>(directory, fmt::format("layer{}", l), shape.hidden, shape.inter));
  }
  for (int d = 0; d < set.config.dp; ++d) {
    const auto stem = [&](const char* what) { return fmt::format("replica{}.{}", d, what); };
    set.inputs.push_back(read_npy_matrix<Scalar>(file(stem("inputs")), activation));
    set.targets.push_back(read_npy_matrix<Scalar>(file(stem("targets")), activation));
    if (has(stem("output"))) {
      set.outputs.push_back(read_npy_matrix<Scalar>(file(stem("output")), activation));
    }
  }
  if (has("dense.loss"))
    set.dense_losses = read_npy_values<Scalar>(file("dense.loss"), per_replica);
  if (has("hybrid.loss")) {
    set.hybrid_losses = read_npy_values<Scalar>(file("hybrid.loss"), per_replica);
  }
  for (std::int64_t l = 0; l < shape.layers && has(fmt::format("dense.grad.layer{}.w1", l)); ++l) {
    set.dense_grads.push_back(load_layer<Scalar>(directory, fmt::format("dense.grad.layer{}", l),
                                                 shape.hidden, shape.inter));
  }
  // Rank 0 is stage 0 and holds layer 0, so its first file tells whether the set has them.
  if (manifest.contains("ranks") && has("hybrid.rank0.grad.layer0.w1")) {
    try {
      set.hybrid_grads = load_hybrid_grads<Scalar>(directory, manifest, path, shape.hidden);
    } catch (const Json::exception& error) {
      fail(path, fmt::format("bad manifest: {}", error.what()));
    }
  }
  return set;
}

template GoldenSet<float> load_golden<float>(const fs::path&);
template GoldenSet<double> load_golden<double>(const fs::path&);

}  // namespace ranklab
