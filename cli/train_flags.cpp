#include "cli/train_flags.hpp"

#include <fmt/format.h>

#include "cli/choice_flags.hpp"
#include "cli/memory_flag.hpp"
#include "cli/train_report.hpp"
#include "model/parallel_layout.hpp"
#include "model/problem.hpp"
#include "model/schedule.hpp"
#include "model/step_options.hpp"
#include "model/training.hpp"
#include "traces/enum_names.hpp"

namespace ranklab::cli {

std::string TrainFlags::first_given() const {
  const std::pair<const char*, bool> given[] = {{"--mode", mode.has_value()},
                                                {"--tp", tp.has_value()},
                                                {"--pp", pp.has_value()},
                                                {"--dp", dp.has_value()},
                                                {"--batch", batch.has_value()},
                                                {"--seq", seq.has_value()},
                                                {"--hidden", hidden.has_value()},
                                                {"--inter", inter.has_value()},
                                                {"--layers", layers.has_value()},
                                                {"--dtype", dtype.has_value()},
                                                {"--order", order.has_value()},
                                                {"--seed", seed.has_value()},
                                                {"--schedule", schedule.has_value()},
                                                {"--microbatches", microbatches.has_value()},
                                                {"--virtual-stages", virtual_stages.has_value()},
                                                {"--tp-comm", tp_comm.has_value()},
                                                {"--steps", steps.has_value()},
                                                {"--lr", lr.has_value()},
                                                {"--init-from", !init_from.empty()},
                                                {"--save", !save.empty()},
                                                {"--max-memory-mib", max_memory_mib.has_value()}};
  for (const auto& [name, is_given] : given) {
    if (is_given) return name;
  }
  return {};
}

namespace {

// The element types the main job trains in (a Trainer<float> or Trainer<double>).
struct TrainDataType {
  DataType dtype;
  std::string_view long_name;
};
constexpr TrainDataType kTrainDataTypes[] = {{DataType::f32, "float32"},
                                             {DataType::f64, "float64"}};

std::vector<std::string_view> train_dtype_names() {
  std::vector<std::string_view> names;
  for (const TrainDataType& t : kTrainDataTypes) names.push_back(to_string(t.dtype));
  return names;
}

}  // namespace

DataType parse_train_dtype(std::string_view text) {
  for (const TrainDataType& t : kTrainDataTypes) {
    if (text == to_string(t.dtype) || text == t.long_name) return t.dtype;
  }
  throw UsageError(fmt::format("unknown --dtype '{}': expected {}", text,
                               alternatives_text(train_dtype_names())));
}

std::string_view long_name(DataType dtype) {
  for (const TrainDataType& t : kTrainDataTypes) {
    if (t.dtype == dtype) return t.long_name;
  }
  return to_string(dtype);
}

void add_train_flags(CLI::App& run, TrainFlags& f) {
  // Every flag is optional (see the top of the header), so the defaults are shown, not set.
  run.add_option("--mode", f.mode,
                 "the seed's TP-only (world TP, layer 0), PP-only, DP-only or TP x PP x DP run")
      ->check(parsed_as("{tp,pp,dp,hybrid}", parse_parallel_mode))
      ->default_str(std::string(to_string(TrainSpec{}.mode)));
  const ModelShape shape;
  run.add_option("--tp", f.tp, "tensor-parallel degree")
      ->default_str(std::to_string(kMainJobLayout.tp));
  run.add_option("--pp", f.pp, "pipeline-parallel degree (stages)")
      ->default_str(std::to_string(kMainJobLayout.pp));
  run.add_option("--dp", f.dp, "data-parallel degree (replicas)")
      ->default_str(std::to_string(kMainJobLayout.dp));
  run.add_option("--batch", f.batch, "batch size B")->default_str(std::to_string(shape.batch));
  run.add_option("--seq", f.seq, "sequence length S")->default_str(std::to_string(shape.seq));
  run.add_option("--hidden", f.hidden, "hidden size H")
      ->default_str(std::to_string(shape.hidden));
  run.add_option("--inter", f.inter, "MLP intermediate size I")
      ->default_str(std::to_string(shape.inter));
  run.add_option("--layers", f.layers, "number of layers L")
      ->default_str(std::to_string(shape.layers));
  run.add_option("--dtype", f.dtype, "element type (float32 and float64 are accepted too)")
      ->check(parsed_as(choices_text(train_dtype_names()), parse_train_dtype))
      ->default_str(std::string(to_string(TrainSpec{}.dtype)));
  run.add_option("--order", f.order,
                 "rank numbering: tp-pp-dp (the seed's: rank = d*PP*TP + p*TP + t) or "
                 "tp-dp-pp (Megatron's)")
      ->check(parsed_as("{tp-pp-dp,tp-dp-pp}", parse_rank_order))
      ->default_str(std::string(to_string(kMainJobLayout.order)));
  run.add_option("--seed", f.seed, "adds 10000*SEED to every weight and data seed")
      ->default_str(std::to_string(TrainSpec{}.seed));
  run.add_option("--schedule", f.schedule,
                 "pipeline schedule: seed (the whole batch at once), gpipe, 1f1b or interleaved; "
                 "see `ranklab schedule`")
      ->check(parsed_as("{seed,gpipe,1f1b,interleaved}", parse_schedule_kind))
      ->default_str(std::string(to_string(StepOptions{}.schedule)));
  run.add_option("--microbatches", f.microbatches, "micro-batches M, dividing B")
      ->default_str(std::to_string(StepOptions{}.microbatches));
  run.add_option("--virtual-stages", f.virtual_stages, "model chunks per stage V (interleaved only)")
      ->default_str(std::to_string(StepOptions{}.virtual_stages));
  run.add_option("--tp-comm", f.tp_comm,
                 "TP regions: allreduce (the seed's) or sp (sequence parallel: all_gather and "
                 "reduce_scatter along the sequence)")
      ->check(parsed_as("{allreduce,sp}", parse_tp_comm))
      ->default_str(std::string(to_string(StepOptions{}.tp_comm)));
  run.add_option("--steps", f.steps,
                 "training steps N: each one forward, backward, DP gradient all_reduce, then SGD "
                 "on every rank's shards; every step checked against the dense reference")
      ->default_str(std::to_string(TrainingOptions{}.steps));
  run.add_option("--lr", f.lr, "SGD learning rate, with --steps > 1")
      ->default_str(fmt::format("{}", kDefaultLearningRate));
  run.add_option("--init-from", f.init_from,
                 "load weights, inputs and targets (and the layout and shape) from a golden "
                 "directory exported by tests/reference/torch_reference.py");
  run.add_option("--save", f.save,
                 "write weights, data, dense and per-rank gradients and losses as a golden "
                 "directory (the reference's names)");
  add_max_memory_flag(run, f.max_memory_mib,
                      "the most the main job may take, in MiB: a shape or --steps whose model, "
                      "gradients, activations and per-step records need more is refused before "
                      "the run (default: half of this machine's memory)");
  run.add_flag("--json", f.json,
               "print the report as JSON instead of text (docs/json.md; logs stay on stderr)");
}

}  // namespace ranklab::cli
