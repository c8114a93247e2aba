// save_golden: the writing half of model/golden.hpp.
#include <fmt/format.h>

#include <ostream>
#include <set>
#include <string>

#include "model/detail/golden_manifest.hpp"
#include "model/golden.hpp"
#include "model/npy.hpp"
#include "traces/error.hpp"
#include "traces/output_file.hpp"

namespace ranklab {

namespace {

namespace fs = std::filesystem;
using detail::DtypeNames;
using detail::fail;
using detail::file_name;
using detail::Json;

// Writes the .npy files of one dtype and keeps the manifest's "files" entries for them.
template <typename Scalar>
class SetWriter {
 public:
  explicit SetWriter(const fs::path& dir) : dir_(dir) {}

  void matrix(const std::string& stem, const Matrix<Scalar>& m, std::vector<std::int64_t> shape,
              const char* role, const std::string& meaning) {
    if (shape.empty()) shape = {m.rows(), m.cols()};
    write_npy_matrix<Scalar>(path(stem), m, shape);
    record(stem, shape, role, meaning);
  }
  void vector(const std::string& stem, const Vector<Scalar>& v, const char* role,
              const std::string& meaning) {
    write_npy_vector<Scalar>(path(stem), v);
    record(stem, {v.size()}, role, meaning);
  }
  void values(const std::string& stem, const std::vector<Scalar>& v, const char* role,
              const std::string& meaning) {
    const std::vector<std::int64_t> shape = {static_cast<std::int64_t>(v.size())};
    write_npy<Scalar>(path(stem), shape, v);
    record(stem, shape, role, meaning);
  }
  void layer(const std::string& stem, const LayerParams<Scalar>& p, const char* role,
             const std::string& meaning) {
    const auto name = [&](const char* what) { return fmt::format("{}.{}", stem, what); };
    const auto text = [&](const char* what) { return fmt::format("{} {}", meaning, what); };
    matrix(name("w1"), p.w1, {}, role, text("w1"));
    vector(name("b1"), p.b1, role, text("b1"));
    matrix(name("w2"), p.w2, {}, role, text("w2"));
    vector(name("b2"), p.b2, role, text("b2"));
  }
  const Json& files() const { return files_; }

 private:
  fs::path path(const std::string& stem) const {
    return dir_ / file_name(stem, DtypeNames<Scalar>::suffix);
  }
  void record(const std::string& stem, const std::vector<std::int64_t>& shape, const char* role,
              const std::string& meaning) {
    files_.push_back(Json{{"name", file_name(stem, DtypeNames<Scalar>::suffix)},
                          {"shape", shape},
                          {"dtype", DtypeNames<Scalar>::dtype},
                          {"role", role},
                          {"meaning", meaning}});
  }

  fs::path dir_;
  Json files_ = Json::array();
};

// Every size in the set agrees with its config (so the files load back). A set that does not
// is the caller's mistake, not the file's: UsageError "DIR: save_golden: reason".
template <typename Scalar>
void check_set(const fs::path& dir, const GoldenSet<Scalar>& set) {
  const GoldenConfig& c = set.config;
  const ModelShape& s = c.shape;
  const auto misuse = [&](std::string_view reason) {
    throw UsageError(fmt::format("{}: save_golden: {}", dir.string(), reason));
  };
  try {
    s.validate();
  } catch (const UsageError& error) {
    misuse(error.what());
  }
  const auto dp = static_cast<std::size_t>(c.dp);
  const auto check = [&](bool ok, std::string_view what) {
    if (!ok) misuse(fmt::format("{} disagrees with the config", what));
  };
  const auto full_layer = [&](const LayerParams<Scalar>& p, std::int64_t inter) {
    p.check();
    return p.hidden() == s.hidden && p.inter() == inter;
  };
  check(c.tp > 0 && c.pp > 0 && c.dp > 0, "tp/pp/dp");
  check(set.layers.size() == static_cast<std::size_t>(s.layers), "the number of layers");
  for (const auto& p : set.layers) check(full_layer(p, s.inter), "a layer's shape");
  check(set.inputs.size() == dp && set.targets.size() == dp, "the number of replicas");
  const auto activation = [&](const Matrix<Scalar>& m) {
    return m.rows() == s.rows() && m.cols() == s.hidden;
  };
  for (std::size_t d = 0; d < dp; ++d) {
    check(activation(set.inputs[d]) && activation(set.targets[d]), "an input or target shape");
  }
  check(set.outputs.empty() || set.outputs.size() == dp, "the number of outputs");
  for (const auto& m : set.outputs) check(activation(m), "an output shape");
  check(set.dense_losses.empty() || set.dense_losses.size() == dp, "the number of dense losses");
  check(set.hybrid_losses.empty() || set.hybrid_losses.size() == dp, "the number of hybrid losses");
  check(set.dense_grads.empty() || set.dense_grads.size() == set.layers.size(),
        "the number of dense gradients");
  for (const auto& g : set.dense_grads) check(full_layer(g, s.inter), "a dense gradient's shape");
  for (const auto& rank : set.hybrid_grads) {
    check(rank.grads.size() == rank.layers.size(), "a hybrid rank's gradient count");
    for (const auto& g : rank.grads) check(full_layer(g, rank.end - rank.first), "a shard shape");
  }
}

// The manifest to extend: the existing one when it describes the same run, else a new one.
Json base_manifest(const fs::path& path, const GoldenConfig& config) {
  if (!fs::exists(path)) {
    return Json{
        {"format", detail::kGoldenFormat},
        {"generator", "ranklab save_golden (model/golden_save.cpp)"},
        {"config", detail::config_to_json(config, Json::array())},
        {"file_suffix", Json::object()},
        {"model", Json{{"layer",
                        "y = linear(gelu(linear(x, w1, b1)), w2) + b2; gelu is the exact "
                        "erf form; no residual, no norm"},
                       {"loss",
                        "mse_loss(y_last, targets), mean over all B*S*H elements, one "
                        "loss per DP replica"},
                       {"dp_gradient", "per-replica gradients summed, then divided by DP"}}},
        {"rank_mapping", "rank = d*(PP*TP) + p*TP + t"}};
  }
  Json manifest = detail::read_manifest(path);
  const GoldenConfig existing = detail::parse_config(manifest, path);
  if (!(existing == config)) {
    fail(path, "holds a set of another configuration; save to a new directory");
  }
  return manifest;
}

Json ranks_json(const auto& hybrid_grads) {
  Json ranks = Json::array();
  for (const auto& r : hybrid_grads) {
    const std::vector<std::int64_t> range = {r.first, r.end};
    ranks.push_back(Json{{"rank", r.rank},
                         {"d", r.d},
                         {"p", r.p},
                         {"t", r.t},
                         {"layers", r.layers},
                         {"w1_rows", range},
                         {"b1_range", range},
                         {"w2_cols", range},
                         {"b2", "full copy"}});
  }
  return ranks;
}

// Adds one dtype's files to the manifest, replacing entries of the same name.
void merge_files(Json& manifest, const Json& files, const char* dtype, const char* suffix) {
  std::set<std::string> names;
  for (const Json& f : files) names.insert(f.at("name").get<std::string>());
  Json merged = Json::array();
  if (manifest.contains("files")) {
    for (const Json& f : manifest.at("files")) {
      if (!names.contains(f.value("name", std::string()))) merged.push_back(f);
    }
  }
  for (const Json& f : files) merged.push_back(f);
  manifest["files"] = std::move(merged);
  manifest["file_suffix"][dtype] = suffix;
  std::set<std::string> dtypes = {dtype};
  for (const Json& d : manifest["config"]["dtypes"]) dtypes.insert(d.get<std::string>());
  manifest["config"]["dtypes"] = dtypes;
}

}  // namespace

template <typename Scalar>
void save_golden(const fs::path& directory, const GoldenSet<Scalar>& set) {
  check_set(directory, set);
  create_output_folder(directory, "the golden set");
  const fs::path path = directory / "manifest.json";
  Json manifest = base_manifest(path, set.config);
  const ModelShape& s = set.config.shape;
  const std::vector<std::int64_t> activation = {s.batch, s.seq, s.hidden};

  SetWriter<Scalar> out(directory);
  for (std::size_t l = 0; l < set.layers.size(); ++l) {
    out.layer(fmt::format("layer{}", l), set.layers[l], "input",
              fmt::format("full (unsharded) layer {}", l));
  }
  for (std::size_t d = 0; d < set.inputs.size(); ++d) {
    const auto stem = [&](const char* what) { return fmt::format("replica{}.{}", d, what); };
    out.matrix(stem("inputs"), set.inputs[d], activation, "input",
               fmt::format("inputs [B,S,H] of DP replica {}", d));
    out.matrix(stem("targets"), set.targets[d], activation, "input",
               fmt::format("MSE targets of DP replica {}", d));
    if (!set.outputs.empty()) {
      out.matrix(stem("output"), set.outputs[d], activation, "output",
                 fmt::format("dense output of the last layer for replica {}", d));
    }
  }
  if (!set.dense_losses.empty()) {
    out.values("dense.loss", set.dense_losses, "output", "dense mse_loss per DP replica");
  }
  for (std::size_t l = 0; l < set.dense_grads.size(); ++l) {
    out.layer(fmt::format("dense.grad.layer{}", l), set.dense_grads[l], "output",
              fmt::format("dense gradient, averaged over DP, of layer {}", l));
  }
  if (!set.hybrid_losses.empty()) {
    out.values("hybrid.loss", set.hybrid_losses, "output", "loss of the TP/PP/DP run per replica");
  }
  for (const auto& rank : set.hybrid_grads) {
    for (std::size_t k = 0; k < rank.layers.size(); ++k) {
      out.layer(fmt::format("hybrid.rank{}.grad.layer{}", rank.rank, rank.layers[k]), rank.grads[k],
                "output",
                fmt::format("rank {} local gradient after DP averaging, layer {}", rank.rank,
                            rank.layers[k]));
    }
  }
  if (!set.hybrid_grads.empty()) manifest["ranks"] = ranks_json(set.hybrid_grads);
  merge_files(manifest, out.files(), DtypeNames<Scalar>::dtype, DtypeNames<Scalar>::suffix);

  write_output_file(path, "the golden manifest",
                    [&](std::ostream& file) { file << manifest.dump(1) << '\n'; });
}

template void save_golden<float>(const fs::path&, const GoldenSet<float>&);
template void save_golden<double>(const fs::path&, const GoldenSet<double>&);

}  // namespace ranklab
