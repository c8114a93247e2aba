#include "model/schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "traces/enum_names.hpp"
#include "traces/error.hpp"

namespace ranklab {

namespace {

// Degrees above this are typos: a schedule has O(M·V) steps per stage, and each stage of a
// run is a set of fibers.
constexpr int kMaxDegree = 1 << 12;
// And the whole schedule, about 4·PP·M·V steps, stays well under a second to build and check.
constexpr std::int64_t kMaxPasses = std::int64_t{1} << 16;

constexpr EnumNames<ScheduleKind, 4> kScheduleNames({"seed", "gpipe", "1f1b", "interleaved"});

}  // namespace

std::string_view to_string(ScheduleKind kind) { return kScheduleNames[kind]; }

ScheduleKind parse_schedule_kind(std::string_view text) {
  if (const auto kind = kScheduleNames.parse(text)) return *kind;
  throw UsageError(
      fmt::format("unknown schedule '{}': expected {}", text, kScheduleNames.alternatives()));
}

void ScheduleSpec::validate() const {
  const std::pair<const char*, int> degrees[] = {
      {"PP", pp}, {"--microbatches", microbatches}, {"--virtual-stages", virtual_stages}};
  for (const auto& [name, value] : degrees) {
    if (value <= 0) throw UsageError(fmt::format("{} must be positive, got {}", name, value));
    if (value > kMaxDegree) {
      throw UsageError(fmt::format("{} = {} is too large (at most {})", name, value, kMaxDegree));
    }
  }
  const std::int64_t passes = std::int64_t{pp} * microbatches * virtual_stages;
  if (passes > kMaxPasses) {
    throw UsageError(
        fmt::format("PP*M*V = {}*{}*{} = {} passes per direction is too large (at most {})", pp,
                    microbatches, virtual_stages, passes, kMaxPasses));
  }
  if (kind == ScheduleKind::seed && microbatches != 1) {
    throw UsageError(fmt::format(
        "--schedule seed runs the whole batch at once: --microbatches {} needs gpipe, 1f1b or "
        "interleaved",
        microbatches));
  }
  if (kind == ScheduleKind::interleaved && microbatches > pp && microbatches % pp != 0) {
    throw UsageError(fmt::format(
        "--schedule interleaved runs micro-batches in groups of PP={}: --microbatches {} must "
        "be a multiple of PP (or at most PP, one group)",
        pp, microbatches));
  }
  if (kind != ScheduleKind::interleaved && virtual_stages != 1) {
    throw UsageError(fmt::format(
        "--virtual-stages {} needs --schedule interleaved ({} holds one chunk per stage)",
        virtual_stages, to_string(kind)));
  }
}

void ScheduleSpec::validate(const ModelShape& shape) const {
  validate();
  if (shape.batch % microbatches != 0) {
    throw UsageError(fmt::format(
        "--microbatches {} does not divide the batch B={} (a micro-batch holds B/M whole samples)",
        microbatches, shape.batch));
  }
  if (shape.layers % virtual_count() != 0) {
    throw UsageError(fmt::format(
        "the number of layers L={} is not divisible by PP*V={}*{} (each stage holds V chunks of "
        "L/(PP*V) layers)",
        shape.layers, pp, virtual_stages));
  }
}

std::string ScheduleSpec::describe() const {
  std::string out = fmt::format("{} PP{} M{}", to_string(kind), pp, microbatches);
  if (virtual_stages > 1) out += fmt::format(" V{}", virtual_stages);
  return out;
}

Step compute_step(PassKind kind, int microbatch, int chunk) {
  return {.compute = true, .pass = {.kind = kind, .microbatch = microbatch, .chunk = chunk}};
}

Step communication_step(std::vector<Transfer> transfers) {
  return {.compute = false, .transfers = std::move(transfers)};
}

std::vector<StageMessages> Schedule::messages() const {
  std::vector<StageMessages> out(stages.size());
  for (std::size_t p = 0; p < stages.size(); ++p) {
    for (const Step& step : stages[p]) {
      for (const Transfer& t : step.transfers) ++(t.send ? out[p].sent : out[p].received);
    }
  }
  return out;
}

std::string Schedule::compute_order(int stage) const {
  std::string out;
  for (const Step& step : stages.at(static_cast<std::size_t>(stage))) {
    if (!step.compute) continue;
    if (!out.empty()) out += ' ';
    out += step.pass.kind == PassKind::forward ? 'F' : 'B';
    out += std::to_string(step.pass.microbatch);
    if (spec.virtual_stages > 1) out += fmt::format(".{}", step.pass.chunk);
  }
  return out;
}

int Schedule::peak_in_flight(int stage) const {
  int live = 0;
  int peak = 0;
  for (const Step& step : stages.at(static_cast<std::size_t>(stage))) {
    if (!step.compute) continue;
    live += step.pass.kind == PassKind::forward ? 1 : -1;
    peak = std::max(peak, live);
  }
  return peak;
}

std::string microbatch_label(int microbatch, int chunk, int virtual_stages) {
  return virtual_stages > 1 ? fmt::format("m{} c{}", microbatch, chunk)
                            : fmt::format("m{}", microbatch);
}

std::string describe(const Pass& pass, int virtual_stages) {
  return fmt::format("{} {}", pass.kind == PassKind::forward ? 'F' : 'B',
                     microbatch_label(pass.microbatch, pass.chunk, virtual_stages));
}

std::string describe(const Transfer& t, int virtual_stages) {
  return fmt::format(
      "{} {} {} {} {}", t.send ? "send" : "recv", t.payload == Payload::activation ? "act" : "grad",
      microbatch_label(t.microbatch, t.chunk, virtual_stages), t.send ? "->" : "<-", t.peer);
}

std::string describe(const Step& step, int virtual_stages) {
  if (step.compute) return describe(step.pass, virtual_stages);
  std::string out;
  for (const Transfer& t : step.transfers) {
    if (!out.empty()) out += ", ";
    out += describe(t, virtual_stages);
  }
  return out;
}

}  // namespace ranklab
