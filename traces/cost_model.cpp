#include "traces/cost_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <sstream>

#include "traces/error.hpp"
#include "traces/input_file.hpp"
#include "traces/quote_input.hpp"
#include "traces/text.hpp"

namespace ranklab {
namespace {

int ceil_log2(std::size_t p) {
  int rounds = 0;
  for (std::size_t reach = 1; reach < p; reach *= 2) ++rounds;
  return rounds;
}

/// The keys of a topology file, each with where it goes and what it must be.
struct TopologyKey {
  const char* name;
  double Topology::*real;  ///< or null for ranks_per_node
  LinkCost Topology::*link;
  double LinkCost::*member;
  bool positive;  ///< must be > 0 (bandwidths, ranks per node); else >= 0
};

const TopologyKey kTopologyKeys[] = {
    {"ranks_per_node", nullptr, nullptr, nullptr, true},
    {"intra.latency", nullptr, &Topology::intra, &LinkCost::latency, false},
    {"intra.bandwidth", nullptr, &Topology::intra, &LinkCost::bandwidth, true},
    {"inter.latency", nullptr, &Topology::inter, &LinkCost::latency, false},
    {"inter.bandwidth", nullptr, &Topology::inter, &LinkCost::bandwidth, true},
    {"compute.flops_per_second", &Topology::flops_per_second, nullptr, nullptr, true},
    {"compute.layer_seconds", &Topology::layer_seconds, nullptr, nullptr, false},
    {"pcie.latency", nullptr, &Topology::pcie, &LinkCost::latency, false},
    {"pcie.bandwidth", nullptr, &Topology::pcie, &LinkCost::bandwidth, true},
};

[[noreturn]] void topology_error(std::string_view name, std::size_t line,
                                 const std::string& reason) {
  throw TraceError(fmt::format("{}:{}: {}", name, line, reason));
}

const TopologyKey* find_topology_key(std::string_view key) {
  for (const TopologyKey& k : kTopologyKeys) {
    if (key == k.name) return &k;
  }
  return nullptr;
}

/// "ranks_per_node, intra.latency, ...": the keys of kTopologyKeys, for an unknown one.
std::string known_topology_keys() {
  std::string out;
  for (const TopologyKey& k : kTopologyKeys) {
    if (!out.empty()) out += ", ";
    out += k.name;
  }
  return out;
}

using TopologyLines = std::map<std::string, std::size_t, std::less<>>;  // key -> its line

/// The links a file left out, once every line is read: intra.* is required; inter.* only
/// with ranks_per_node, and without it the one node's link serves every pair.
void complete_links(Topology& t, const TopologyLines& seen, std::string_view name,
                    std::size_t end_line) {
  const auto fail = [&](std::size_t line, const std::string& reason) {
    topology_error(name, line, reason);
  };
  for (const char* key : {"intra.latency", "intra.bandwidth"}) {
    if (!seen.contains(key)) fail(end_line, fmt::format("missing '{}'", key));
  }
  const bool has_inter = seen.contains("inter.latency") || seen.contains("inter.bandwidth");
  if (t.ranks_per_node > 0) {
    for (const char* key : {"inter.latency", "inter.bandwidth"}) {
      if (!seen.contains(key)) {
        fail(end_line, fmt::format("missing '{}' (ranks_per_node is set)", key));
      }
    }
  } else if (has_inter) {
    fail(seen.contains("inter.latency") ? seen.at("inter.latency") : seen.at("inter.bandwidth"),
         "inter.* needs ranks_per_node (otherwise every rank shares one node)");
  } else {
    t.inter = t.intra;
  }
}

}  // namespace

CostModel::CostModel(Topology topology) : topology_(topology) {}

CostModel CostModel::alpha_beta(double alpha, double beta, double flops_per_second) {
  Topology t;
  t.intra = t.inter = LinkCost{alpha, beta};
  t.flops_per_second = flops_per_second;
  return CostModel(t);
}

namespace {
constexpr const char* kCostSyntax =
    "alpha=SECONDS,beta=BYTES_PER_SECOND[,flops=FLOP_PER_SECOND][,layer=SECONDS]";
}  // namespace

CostModel CostModel::parse(std::string_view text) {
  std::map<std::string, double, std::less<>> values;
  std::string_view rest = text;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const std::size_t eq = item.find('=');
    const std::string_view key = item.substr(0, eq);
    if (eq == std::string_view::npos ||
        (key != "alpha" && key != "beta" && key != "flops" && key != "layer")) {
      throw UsageError(fmt::format(
          "--cost: {} is not KEY=VALUE with KEY alpha, beta, flops or layer (expected {})",
          quote_input(item),
          kCostSyntax));
    }
    const auto value = parse_whole<double>(item.substr(eq + 1));
    if (!value || *value < 0 || (key != "alpha" && *value == 0)) {
      throw UsageError(fmt::format("--cost: {} must be a number {}, got {}", key,
                                   key == "alpha" ? ">= 0" : "> 0",
                                   quote_input(item.substr(eq + 1))));
    }
    if (!values.emplace(std::string(key), *value).second) {
      throw UsageError(fmt::format("--cost: {} given twice", key));
    }
  }
  for (const char* key : {"alpha", "beta"}) {
    if (!values.contains(key)) {
      throw UsageError(
          fmt::format("--cost: missing {} (expected {})", key, kCostSyntax));
    }
  }
  const auto flops = values.find("flops");
  CostModel model = alpha_beta(values.at("alpha"), values.at("beta"),
                               flops == values.end() ? 0.0 : flops->second);
  if (const auto layer = values.find("layer"); layer != values.end()) {
    model.topology_.layer_seconds = layer->second;
  }
  return model;
}

CostModel CostModel::parse_topology(std::string_view text, std::string_view name) {
  Topology t;
  TopologyLines seen;
  std::size_t line_no = 0;
  const auto fail = [&](std::size_t line, const std::string& reason) {
    topology_error(name, line, reason);
  };
  std::istringstream in{std::string(text)};
  std::string raw;
  while (std::getline(in, raw)) {
    ++line_no;
    std::string_view line = raw;
    line = trim(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    const std::size_t eq = line.find('=');
    if (eq == std::string_view::npos) {
      fail(line_no, fmt::format("expected KEY = VALUE, got {}", quote_input(line)));
    }
    const std::string_view key = trim(line.substr(0, eq));
    const std::string_view value_text = trim(line.substr(eq + 1));
    const TopologyKey* spec = find_topology_key(key);
    if (spec == nullptr) {
      topology_error(
          name, line_no,
          fmt::format("unknown key {} (known: {})", quote_input(key), known_topology_keys()));
    }
    if (const auto it = seen.find(key); it != seen.end()) {
      fail(line_no, fmt::format("'{}' repeats line {}", key, it->second));
    }
    seen.emplace(std::string(key), line_no);
    const auto value = parse_whole<double>(value_text);
    if (!value || *value < 0 || (spec->positive && *value == 0)) {
      fail(line_no, fmt::format("'{}' must be a number {}, got {}", key,
                                spec->positive ? "> 0" : ">= 0", quote_input(value_text)));
    }
    if (spec->real != nullptr) {
      t.*(spec->real) = *value;
    } else if (spec->link != nullptr) {
      (t.*(spec->link)).*(spec->member) = *value;
    } else {
      if (*value != std::floor(*value) || *value > (1 << 20)) {
        fail(line_no, fmt::format("'ranks_per_node' must be a whole number of ranks, got {}",
                                  quote_input(value_text)));
      }
      t.ranks_per_node = static_cast<int>(*value);
    }
  }
  complete_links(t, seen, name, line_no + 1);
  return CostModel(t);
}

CostModel CostModel::load(const std::filesystem::path& path) {
  return parse_topology(read_input_file(path, "topology file"), path.string());
}

bool CostModel::same_node(int a, int b) const {
  const int per = topology_.ranks_per_node;
  return per <= 0 || a / per == b / per;
}

const LinkCost& CostModel::link(int a, int b) const {
  return same_node(a, b) ? topology_.intra : topology_.inter;
}

const LinkCost& CostModel::link(std::span<const int> ranks) const {
  for (int r : ranks) {
    if (!same_node(r, ranks.front())) return topology_.inter;
  }
  return topology_.intra;
}

double CostModel::p2p_seconds(int src, int dst, std::uint64_t bytes) const {
  return link(src, dst).transfer_seconds(bytes);
}

double CostModel::collective_seconds(OpKind op, std::span<const int> ranks,
                                     std::uint64_t unit_bytes) const {
  const std::size_t p = ranks.size();
  if (p <= 1) return 0;
  const LinkCost& l = link(ranks);
  const double n = static_cast<double>(unit_bytes);
  const double steps = static_cast<double>(p - 1);
  const double rounds = ceil_log2(p);
  switch (op) {
    case OpKind::barrier:
      return rounds * l.latency;
    case OpKind::broadcast:
    case OpKind::reduce:
      return rounds * l.transfer_seconds(unit_bytes);
    case OpKind::all_reduce:
      return 2 * steps * (l.latency + n / (static_cast<double>(p) * l.bandwidth));
    case OpKind::all_gather:
    case OpKind::reduce_scatter:
    case OpKind::all_to_all:
      return steps * l.transfer_seconds(unit_bytes);
    case OpKind::gather:
    case OpKind::scatter:
      return rounds * l.latency + steps * n / l.bandwidth;
    case OpKind::send:
    case OpKind::recv:
      break;
  }
  return 0;
}

double CostModel::event_seconds(const ComputeItem& item, int rank) const {
  // A staging copy crosses the rank's PCIe link, whatever else the event says.
  if (item.staging()) return topology_.pcie.transfer_seconds(item.bytes);
  const double factor = rank >= 0 ? compute_factor(rank) : 1.0;
  if (item.layer >= 0 && topology_.layer_seconds > 0) {
    return factor * layer_seconds(item.backward() ? 2.0 : 1.0);
  }
  const double flops =
      topology_.flops_per_second > 0 ? item.flops / topology_.flops_per_second : 0.0;
  return factor * (item.seconds + flops);
}

double CostModel::compute_seconds(const ComputeWork& work, int rank) const {
  if (work.items.empty()) {
    return event_seconds(ComputeItem{.flops = work.flops, .seconds = work.seconds}, rank);
  }
  double total = 0;
  for (const ComputeItem& item : work.items) total += event_seconds(item, rank);
  return total;
}

void CostModel::set_compute_factor(int rank, double factor) {
  if (rank < 0) throw UsageError(fmt::format("rank {} cannot be slowed: ranks count from 0", rank));
  if (!(factor > 0) || !std::isfinite(factor)) {
    throw UsageError(
        fmt::format("rank {}'s compute factor must be a number > 0, got {:g}", rank, factor));
  }
  if (factor == 1.0) {
    topology_.compute_factor.erase(rank);
  } else {
    topology_.compute_factor[rank] = factor;
  }
}

double CostModel::compute_factor(int rank) const {
  const auto it = topology_.compute_factor.find(rank);
  return it == topology_.compute_factor.end() ? 1.0 : it->second;
}

bool CostModel::prices_compute() const {
  return topology_.flops_per_second > 0 || topology_.layer_seconds > 0;
}

std::string CostModel::describe() const {
  const Topology& t = topology_;
  std::string text;
  if (t.ranks_per_node <= 0 && t.intra == t.inter) {
    text = fmt::format("alpha={:g} s, beta={:g} B/s", t.intra.latency, t.intra.bandwidth);
  } else {
    text = fmt::format(
        "{} ranks/node, intra alpha={:g} s beta={:g} B/s, inter alpha={:g} s "
        "beta={:g} B/s",
        t.ranks_per_node, t.intra.latency, t.intra.bandwidth, t.inter.latency, t.inter.bandwidth);
  }
  if (t.flops_per_second > 0) text += fmt::format(", {:g} FLOP/s", t.flops_per_second);
  if (t.layer_seconds > 0) text += fmt::format(", {:g} s/layer", t.layer_seconds);
  if (t.pcie != LinkCost{}) {
    text += fmt::format(", pcie alpha={:g} s beta={:g} B/s", t.pcie.latency, t.pcie.bandwidth);
  }
  for (const auto& [rank, factor] : t.compute_factor) {
    text += fmt::format(", rank {} compute x{:g}", rank, factor);
  }
  return text;
}

}  // namespace ranklab
