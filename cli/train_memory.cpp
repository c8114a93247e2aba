#include "cli/train_memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "cli/memory_flag.hpp"
#include "cli/train_steps.hpp"
#include "emulator/replay.hpp"
#include "traces/error.hpp"

namespace ranklab::cli {

TrainMemory estimate_train_memory(const TrainSpec& spec) {
  const ModelShape& s = spec.shape;
  const auto element = static_cast<double>(size_of(spec.dtype));
  const auto d = [](std::int64_t v) { return static_cast<double>(v); };
  // One copy of every layer's W1 [I, H], b1 [I], W2 [H, I], b2 [H].
  const double model = d(s.layers) * (2 * d(s.hidden) * d(s.inter) + d(s.hidden) + d(s.inter));
  const double replicas = spec.layout.dp;
  TrainMemory m;
  // Alive together during the run: the problem's weights, the dense reference's gradients,
  // and each replica's weights and gradients, sharded over its TP x PP ranks.
  m.parameters = (2 + 2 * replicas) * model * element;
  // The dense pass keeps each layer's input [B*S, H] and hidden [B*S, I]; inputs and
  // targets [B*S, H] per replica.
  m.activations = (d(s.layers) * d(s.rows()) * (d(s.hidden) + d(s.inter)) +
                   2 * replicas * d(s.rows()) * d(s.hidden)) *
                  element;
  if (spec.multi_step()) m.records = TrainingChecks<float>::record_bytes(spec);
  return m;
}

void check_train_memory(const TrainSpec& spec, std::uint64_t mib) {
  const TrainMemory need = estimate_train_memory(spec);
  const MemoryLimit limit = memory_limit(mib);
  if (need.total() <= static_cast<double>(limit.bytes)) return;
  const auto bytes = [](double v) {
    // 2^64 and more print as "over 16 EiB": no machine has that either.
    return v < 0x1p64 ? format_bytes(static_cast<std::uint64_t>(v)) : std::string("over 16 EiB");
  };
  const ModelShape& s = spec.shape;
  throw UsageError(fmt::format(
      "--batch {} --seq {} --hidden {} --inter {} --layers {} with --dp {} and --steps {} ({}) "
      "need at least {} ({} of parameters and gradients, {} of activations and data, {} of "
      "per-step records), over the memory limit of {}",
      s.batch, s.seq, s.hidden, s.inter, s.layers, spec.layout.dp, spec.training.steps,
      to_string(spec.dtype), bytes(need.total()), bytes(need.parameters),
      bytes(need.activations), bytes(need.records), limit.described));
}

}  // namespace ranklab::cli
