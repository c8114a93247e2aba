#include "model/step_options.hpp"

#include <fmt/format.h>

#include "traces/enum_names.hpp"
#include "traces/error.hpp"

namespace ranklab {

namespace {

constexpr EnumNames<TpComm, 2> kTpCommNames({"allreduce", "sp"});

}  // namespace

std::string_view to_string(TpComm comm) { return kTpCommNames[comm]; }

TpComm parse_tp_comm(std::string_view text) {
  if (text == "all_reduce") return TpComm::all_reduce;  // the collective's own name, too
  if (const auto comm = kTpCommNames.parse(text)) return *comm;
  throw UsageError(fmt::format(
      "unknown --tp-comm '{}': expected allreduce (the seed's) or sp (sequence parallel: "
      "all_gather and reduce_scatter along the sequence)",
      text));
}

void StepOptions::validate(const ParallelConfig& config, const ModelShape& shape) const {
  schedule_spec(config.pp).validate(shape);
  if (tp_comm == TpComm::sequence_parallel && shape.seq % config.tp != 0) {
    throw UsageError(fmt::format(
        "--tp-comm sp splits the sequence among the TP ranks: S={} is not divisible by TP={}",
        shape.seq, config.tp));
  }
}

std::string StepOptions::describe() const {
  return fmt::format("schedule {}, {} micro-batch{}, {} chunk{} per stage, TP comm {}",
                     to_string(schedule), microbatches, microbatches == 1 ? "" : "es",
                     virtual_stages, virtual_stages == 1 ? "" : "s", to_string(tp_comm));
}

}  // namespace ranklab
