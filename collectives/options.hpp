// Options of the communicator's calls: aggregates with defaults, as in c10d and gloo.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "traces/types.hpp"

namespace ranklab {

/// How a collective moves its data. `direct` is the fabric's native rendezvous (one
/// logical step); the others are real message patterns sent through point-to-point
/// operations, so the trace and the cost model see the traffic real libraries send.
enum class Algorithm {
  automatic,           ///< the communicator's default (set per run with --algo)
  direct,
  ring,                ///< all_reduce, all_gather, reduce_scatter
  tree,                ///< binomial tree: broadcast, reduce, gather, scatter
  recursive_doubling,  ///< all_reduce
  halving_doubling,    ///< all_reduce (Rabenseifner: reduce_scatter + all_gather)
  dissemination,       ///< barrier
  pairwise,            ///< all_to_all
};

std::string_view to_string(Algorithm algorithm);
/// Parses the names above (`recursive-doubling` or `recursive_doubling`); nullopt if unknown.
std::optional<Algorithm> parse_algorithm(std::string_view name);

struct BarrierOptions {
  Algorithm algorithm = Algorithm::automatic;
};
struct AllReduceOptions {
  ReduceOp op = ReduceOp::sum;
  Algorithm algorithm = Algorithm::automatic;
};
struct BroadcastOptions {
  int root = 0;  ///< group rank
  Algorithm algorithm = Algorithm::automatic;
};
struct ReduceOptions {
  ReduceOp op = ReduceOp::sum;
  int root = 0;
  Algorithm algorithm = Algorithm::automatic;
};
struct AllGatherOptions {
  Algorithm algorithm = Algorithm::automatic;
};
struct ReduceScatterOptions {
  ReduceOp op = ReduceOp::sum;
  Algorithm algorithm = Algorithm::automatic;
};
struct GatherOptions {
  int root = 0;
  Algorithm algorithm = Algorithm::automatic;
};
struct ScatterOptions {
  int root = 0;
  Algorithm algorithm = Algorithm::automatic;
};
struct AllToAllOptions {
  Algorithm algorithm = Algorithm::automatic;
};

}  // namespace ranklab
