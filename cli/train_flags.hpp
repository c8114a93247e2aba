// The flags of `ranklab run`'s main job: the seed's training step (issue 3 §5). Every
// flag is optional so that a flag the user gave can be told from a default: --init-from
// takes the layout and shape from the golden set, and a flag that contradicts it is an
// error rather than silently ignored.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "model/parallel_layout.hpp"
#include "traces/types.hpp"

namespace ranklab::cli {

/// The main job's layout without --tp, --pp, --dp and --order: TP x PP x DP = 2 x 2 x 2.
inline constexpr ParallelConfig kMainJobLayout{.tp = 2, .pp = 2, .dp = 2};

/// --dtype: f32 or f64 (or their long names, float32 and float64); throws UsageError
/// naming the element types the main job trains in otherwise.
DataType parse_train_dtype(std::string_view text);
/// "float32": the long name (PyTorch's, and the golden sets') the main job's reports use.
std::string_view long_name(DataType dtype);

struct TrainFlags {
  std::optional<std::string> mode;  ///< tp, pp, dp, hybrid (default hybrid)
  std::optional<int> tp;
  std::optional<int> pp;
  std::optional<int> dp;
  std::optional<std::int64_t> batch;
  std::optional<std::int64_t> seq;
  std::optional<std::int64_t> hidden;
  std::optional<std::int64_t> inter;
  std::optional<std::int64_t> layers;
  std::optional<std::string> dtype;  ///< f32 or f64 (float32 / float64 accepted)
  std::optional<std::string> order;  ///< tp-pp-dp (default) or tp-dp-pp
  std::optional<std::uint64_t> seed;
  std::optional<std::string> schedule;  ///< seed (default), gpipe, 1f1b, interleaved
  std::optional<int> microbatches;
  std::optional<int> virtual_stages;
  std::optional<std::string> tp_comm;  ///< allreduce (default) or sp
  std::optional<int> steps;            ///< training steps (default 1: the seed's single step)
  std::optional<double> lr;            ///< SGD learning rate (--steps > 1 only)
  std::string init_from;               ///< a golden directory; empty: generated weights and data
  std::string save;                    ///< write the run as a golden directory; empty: do not
  std::optional<std::uint64_t> max_memory_mib;  ///< the job's memory limit; absent: the default
  bool json = false;

  /// The first training flag the user gave ("--tp"), or empty: --scenario refuses them.
  std::string first_given() const;
};

/// Adds the training flags to `run`; `flags` must outlive parsing.
void add_train_flags(CLI::App& run, TrainFlags& flags);

}  // namespace ranklab::cli
