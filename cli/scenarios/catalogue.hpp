// The parts of the scenario registry (cli/scenarios.hpp), one per file, and what the
// catalogue's rank programs share.
//
// The catalogue programs are written like Megatron / torch.distributed code: a
// ParallelLayout gives each rank its TP, PP and DP groups, and the "model" is a toy whose
// values have a closed form (a layer adds 1 to every element, computed as TP partial sums
// that are exact in float), so each fixed twin checks its own results and throws if they
// are wrong, and each bug is the one-line change that real code gets wrong.
#pragma once

#include <vector>

#include "cli/scenarios.hpp"
#include "model/parallel_layout.hpp"

namespace ranklab::cli {

std::vector<Scenario> basic_scenarios();     ///< basic.cpp: one per kind of report
std::vector<Scenario> pipeline_scenarios();  ///< pipeline.cpp: PP send/recv bugs
std::vector<Scenario> group_scenarios();     ///< groups.cpp: TP and process-group bugs
std::vector<Scenario> data_parallel_scenarios();  ///< data_parallel.cpp: DP bugs and faults

/// The toy layer: every element + 1, computed as TP partial sums ((x + 1) / TP on each
/// shard) all_reduced over `tp`, as a row-parallel linear layer is. Exact for small
/// integers and TP a power of two.
void toy_layer(Communicator& tp, std::vector<float>& x);

/// Throws Error naming `what` and the first element of `x` that is not `expected`.
void expect_all(const std::vector<float>& x, float expected, int rank, const char* what);

/// Appends a bug and its fixed twin, made from one program: `make(buggy)` builds the body.
template <typename Make>
void add_bug_and_twin(std::vector<Scenario>& out, Scenario bug, Scenario twin, Make make) {
  bug.body = make(true);
  twin.body = make(false);
  bug.is_bug = true;
  bug.twin = twin.name;
  twin.twin = bug.name;
  bug.fixed_world = twin.fixed_world = true;
  twin.default_world = bug.default_world;
  twin.min_world = bug.min_world = bug.default_world;
  out.push_back(std::move(bug));
  out.push_back(std::move(twin));
}

}  // namespace ranklab::cli
