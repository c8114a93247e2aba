#include "model/parallel_layout.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>
#include <string>

#include "traces/enum_names.hpp"
#include "traces/error.hpp"

namespace ranklab {

namespace {

// Degrees above this are typos: the emulator runs every rank as a fiber in one process.
constexpr int kMaxDegree = 1 << 16;

constexpr EnumNames<RankOrder, 2> kRankOrderNames({"tp-pp-dp", "tp-dp-pp"});
constexpr EnumNames<GroupKind, 3> kGroupKindNames({"tp", "pp", "dp"});

int& coordinate(GroupKind kind, Coords& c) {
  return kind == GroupKind::tp ? c.t : kind == GroupKind::pp ? c.p : c.d;
}

}  // namespace

std::string_view to_string(RankOrder order) { return kRankOrderNames[order]; }

RankOrder parse_rank_order(std::string_view text) {
  std::string dashed(text);  // the enumerators' own spelling, tp_pp_dp, is taken too
  std::replace(dashed.begin(), dashed.end(), '_', '-');
  if (const auto order = kRankOrderNames.parse(dashed)) return *order;
  throw UsageError(fmt::format(
      "unknown rank order '{}': expected tp-pp-dp (the seed's, rank = d*PP*TP + p*TP + t) or "
      "tp-dp-pp (Megatron's, rank = p*DP*TP + d*TP + t)",
      text));
}

std::string_view to_string(GroupKind kind) { return kGroupKindNames[kind]; }

std::string group_name(GroupKind kind, const std::vector<int>& ranks) {
  return fmt::format("{}[{}]", to_string(kind), fmt::join(ranks, ","));
}

void ParallelConfig::validate() const {
  const std::pair<const char*, int> degrees[] = {{"TP", tp}, {"PP", pp}, {"DP", dp}};
  for (const auto& [name, value] : degrees) {
    if (value <= 0) throw UsageError(fmt::format("{} must be positive, got {}", name, value));
    if (value > kMaxDegree) {
      throw UsageError(fmt::format("{} = {} is too large (at most {})", name, value, kMaxDegree));
    }
  }
  if (static_cast<std::int64_t>(tp) * pp * dp > kMaxDegree) {
    throw UsageError(
        fmt::format("TP*PP*DP = {}*{}*{} is too large (at most {} ranks)", tp, pp, dp, kMaxDegree));
  }
}

void ParallelConfig::validate(const ModelShape& shape) const {
  validate();
  shape.validate();
  if (shape.layers % pp != 0) {
    throw UsageError(fmt::format(
        "the number of layers L={} is not divisible by PP={} (stages hold L/PP layers each)",
        shape.layers, pp));
  }
  if (shape.inter % tp != 0) {
    throw UsageError(fmt::format(
        "the intermediate size I={} is not divisible by TP={} (each TP rank holds I/TP columns)",
        shape.inter, tp));
  }
}

int ParallelConfig::size(GroupKind kind) const {
  switch (kind) {
    case GroupKind::tp:
      return tp;
    case GroupKind::pp:
      return pp;
    case GroupKind::dp:
      return dp;
  }
  return 1;
}

int ParallelConfig::index(GroupKind kind, const Coords& coords) {
  Coords copy = coords;
  return coordinate(kind, copy);
}

int ParallelConfig::rank_of(const Coords& c) const {
  if (c.d < 0 || c.d >= dp || c.p < 0 || c.p >= pp || c.t < 0 || c.t >= tp) {
    throw UsageError(fmt::format("coordinates (d={}, p={}, t={}) are outside DP={} PP={} TP={}",
                                 c.d, c.p, c.t, dp, pp, tp));
  }
  return order == RankOrder::tp_pp_dp ? (c.d * pp + c.p) * tp + c.t : (c.p * dp + c.d) * tp + c.t;
}

Coords ParallelConfig::coords_of(int rank) const {
  if (rank < 0 || rank >= world_size()) {
    throw UsageError(fmt::format("rank {} is outside the world of {} ranks", rank, world_size()));
  }
  const int t = rank % tp;
  const int rest = rank / tp;
  if (order == RankOrder::tp_pp_dp) return {.d = rest / pp, .p = rest % pp, .t = t};
  return {.d = rest % dp, .p = rest / dp, .t = t};
}

std::vector<int> ParallelConfig::group_ranks(GroupKind kind, int rank) const {
  Coords c = coords_of(rank);
  std::vector<int> ranks;
  for (int i = 0; i < size(kind); ++i) {
    coordinate(kind, c) = i;
    ranks.push_back(rank_of(c));
  }
  return ranks;
}

std::vector<std::vector<int>> ParallelConfig::all_groups(GroupKind kind) const {
  // Walking ranks in order meets each group first at its smallest member.
  std::vector<std::vector<int>> groups;
  std::set<int> seen;
  for (int rank = 0; rank < world_size(); ++rank) {
    if (seen.contains(rank)) continue;
    groups.push_back(group_ranks(kind, rank));
    seen.insert(groups.back().begin(), groups.back().end());
  }
  return groups;
}

std::string ParallelConfig::describe() const {
  return fmt::format("TP{} PP{} DP{} ({})", tp, pp, dp, to_string(order));
}

StageLayers stage_layers(std::int64_t layers, int pp, int p) {
  if (pp <= 0 || p < 0 || p >= pp || layers % pp != 0) {
    throw UsageError(fmt::format("stage {} of PP={} for L={} layers", p, pp, layers));
  }
  const std::int64_t per_stage = layers / pp;
  return {.first = p * per_stage, .end = (p + 1) * per_stage};
}

std::vector<StageLayers> stage_chunks(std::int64_t layers, int pp, int virtual_stages, int p) {
  if (virtual_stages <= 0 || pp <= 0 || p < 0 || p >= pp ||
      layers % (static_cast<std::int64_t>(pp) * virtual_stages) != 0) {
    throw UsageError(fmt::format("stage {} of PP={} with V={} chunks for L={} layers", p, pp,
                                 virtual_stages, layers));
  }
  const std::int64_t per_chunk = layers / (static_cast<std::int64_t>(pp) * virtual_stages);
  std::vector<StageLayers> chunks;
  for (int c = 0; c < virtual_stages; ++c) {
    const std::int64_t k = static_cast<std::int64_t>(c) * pp + p;
    chunks.push_back({.first = k * per_chunk, .end = (k + 1) * per_chunk});
  }
  return chunks;
}

std::vector<std::int64_t> stage_layer_indices(std::int64_t layers, int pp, int virtual_stages,
                                              int p) {
  std::vector<std::int64_t> out;
  for (const StageLayers& chunk : stage_chunks(layers, pp, virtual_stages, p)) {
    for (std::int64_t l = chunk.first; l < chunk.end; ++l) out.push_back(l);
  }
  return out;
}

ParallelLayout::ParallelLayout(Communicator& world, const ParallelConfig& config)
    : config_(config), rank_(world.rank()) {
  config_.validate();
  if (config_.world_size() != world.size()) {
    throw UsageError(fmt::format("{} needs {} ranks, the world has {}", config_.describe(),
                                 config_.world_size(), world.size()));
  }
  coords_ = config_.coords_of(rank_);
  groups_.reserve(kGroupKinds.size());
  for (const GroupKind kind : kGroupKinds) {
    const std::string kind_name(to_string(kind));
    for (const std::vector<int>& ranks : config_.all_groups(kind)) {
      Communicator group = world.new_group(ranks, kind_name);
      if (group.is_member()) groups_.push_back(std::move(group));
    }
  }
}

}  // namespace ranklab
