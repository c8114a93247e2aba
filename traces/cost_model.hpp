// What communication and computation would cost on a real cluster: the α-β (Hockney)
// model per link, the usual per-algorithm formulas for collectives, and a FLOP rate or a
// time per layer for compute, and a PCIe link for the copies that stage a device's tensors
// through host memory. traces/virtual_time.hpp runs a trace against it.
//
// A message of n bytes between ranks a and b takes α + n/β, with (α, β) the link between
// them: inside a node or between nodes (ranks r and s share a node when r / ranks_per_node
// == s / ranks_per_node). A collective over p ranks with per-rank unit n bytes (FORMAT.md's
// `count` x dtype) takes, with (α, β) the slowest link among its members:
//   barrier         ceil(log2 p) α                     (dissemination)
//   broadcast       ceil(log2 p) (α + n/β)             (binomial tree)
//   reduce          ceil(log2 p) (α + n/β)             (binomial tree)
//   all_reduce      2(p-1) (α + n/(pβ))                (ring: reduce-scatter + all-gather)
//   all_gather      (p-1) (α + n/β)                    (ring; n: one rank's input)
//   reduce_scatter  (p-1) (α + n/β)                    (ring; n: one rank's output)
//   gather, scatter ceil(log2 p) α + (p-1) n/β          (binomial tree)
//   all_to_all      (p-1) (α + n/β)                    (pairwise; n: one peer's chunk)
// (Thakur, Rabenseifner & Gropp, IJHPCA 19(1), 2005; Patarasuk & Yuan, JPDC 69(2), 2009.)
// Collectives run as messages (`--algo ring`, ...) are costed message by message instead,
// which gives the same figures: tests check one against the other.
//
// Usable on its own (a pipeline schedule's bubble, say): build a CostModel, ask it what a
// transfer, a collective or a layer costs, or build a Trace (traces/trace_builder.hpp) and
// simulate it (traces/virtual_time.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "traces/event.hpp"

namespace ranklab {

/// One kind of link: latency α in seconds, bandwidth β in bytes per second.
struct LinkCost {
  double latency = 0;
  double bandwidth = std::numeric_limits<double>::infinity();

  /// α + bytes/β.
  double transfer_seconds(std::uint64_t bytes) const {
    return latency + static_cast<double>(bytes) / bandwidth;
  }
  friend bool operator==(const LinkCost&, const LinkCost&) = default;
};

/// The machine a trace is costed on. Every rank on one node unless ranks_per_node says.
struct Topology {
  int ranks_per_node = 0;  ///< 0: all ranks share one node
  LinkCost intra;          ///< between ranks of one node
  LinkCost inter;          ///< between nodes
  double flops_per_second =
      0;                     ///< 0: FLOPs cost nothing (a trace's compute in seconds still counts)
  /// The forward of one layer for one micro-batch, if known: prices every compute event with
  /// a layer (a backward twice), in place of its FLOPs.
  double layer_seconds = 0;
  /// Between a rank's device and its host memory: prices each staging copy (format 1.3) at
  /// α + bytes/β. Free unless the topology file sets pcie.latency / pcie.bandwidth.
  LinkCost pcie;
  /// Ranks whose compute runs slower (or faster) than the rest: every compute event of rank
  /// r costs compute_factor[r] times what it would (`--slow R=xF`); staging copies are
  /// PCIe transfers and keep their cost. Ranks not listed run at factor 1.
  std::map<int, double> compute_factor;

  friend bool operator==(const Topology&, const Topology&) = default;
};

class CostModel {
 public:
  /// One link everywhere: α seconds, β bytes per second; compute at `flops_per_second`.
  static CostModel alpha_beta(double alpha, double beta, double flops_per_second = 0);
  /// `--cost alpha=SECONDS,beta=BYTES_PER_SECOND[,flops=FLOP_PER_SECOND][,layer=SECONDS]`
  /// (layer: a layer's forward, Topology::layer_seconds); throws
  /// UsageError naming what is wrong.
  static CostModel parse(std::string_view text);
  /// A topology file (format in README, "Cost model"): `key = value` lines; throws
  /// TraceError "FILE:LINE: reason".
  static CostModel load(const std::filesystem::path& path);
  /// The same from text; `name` is what errors call it.
  static CostModel parse_topology(std::string_view text, std::string_view name);

  explicit CostModel(Topology topology);

  const Topology& topology() const { return topology_; }
  /// Whether ranks a and b share a node.
  bool same_node(int a, int b) const;
  /// The link between two ranks.
  const LinkCost& link(int a, int b) const;
  /// The slowest link among `ranks` (inter-node if they span nodes).
  const LinkCost& link(std::span<const int> ranks) const;

  /// One message of `bytes` from `src` to `dst`.
  double p2p_seconds(int src, int dst, std::uint64_t bytes) const;
  /// A native collective `op` over `ranks` with per-rank unit `unit_bytes` (formulas above).
  double collective_seconds(OpKind op, std::span<const int> ranks, std::uint64_t unit_bytes) const;
  /// Computation: seconds as given, plus FLOPs at the FLOP rate (free without one); a layer
  /// pass (a compute event with a layer) costs layer_seconds instead when the model has it,
  /// twice that for a backward; a staging copy costs pcie.latency + bytes/pcie.bandwidth.
  /// `rank` (if >= 0) scales it by that rank's compute factor (Topology::compute_factor).
  double compute_seconds(const ComputeWork& work, int rank = -1) const;
  double event_seconds(const ComputeItem& item, int rank = -1) const;
  /// Rank `rank`'s compute costs `factor` times as much (> 0 and finite; 1: as the rest);
  /// throws UsageError otherwise.
  void set_compute_factor(int rank, double factor);
  /// The factor set for `rank`, else 1.
  double compute_factor(int rank) const;
  /// Whether FLOPs or layers cost anything (flops= or layer_seconds is set).
  bool prices_compute() const;
  /// `layers` layer forwards (topology's layer_seconds each; 0 if unknown).
  double layer_seconds(double layers) const { return layers * topology_.layer_seconds; }

  /// "alpha=1e-06,beta=1e+10" or "topology: 4 ranks/node, intra ..., inter ...".
  std::string describe() const;

 private:
  Topology topology_;
};

}  // namespace ranklab
