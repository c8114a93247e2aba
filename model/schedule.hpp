// A pipeline schedule as data (issue 6 §2): for each stage, the list of steps its ranks run.
// A step is either a compute pass (the forward or backward of micro-batch m through model
// chunk c of the stage) or a communication step: point-to-point transfers that are all
// posted together and then all waited for, as torch.distributed's batch_isend_irecv and
// Megatron's p2p_communication do. Nothing is outstanding between steps, so a schedule that
// completes under the emulator's rendezvous sends relies on no buffering.
//
// Vocabulary (Megatron-LM's): the model's L layers form PP·V virtual stages of L/(PP·V)
// layers each; stage p holds V model chunks, chunk c being virtual stage k = c·PP + p. A
// micro-batch goes forward through virtual stages 0, 1, ..., PP·V-1 (from stage PP-1 chunk
// c to stage 0 chunk c+1 when V > 1) and backward in the reverse order. With V = 1 the
// chunk is the stage and k = p.
//
// The builders (model/schedule_builders.hpp) make the seed's whole-batch schedule, GPipe,
// 1F1B and interleaved 1F1B; model/schedule_validator.hpp checks any schedule, and
// model/pipeline_step.hpp runs one.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/shape.hpp"

namespace ranklab {

/// Which schedule.
enum class ScheduleKind {
  seed,         ///< the seed's whole-batch step: blocking send/recv, no micro-batches
  gpipe,        ///< every forward, then every backward
  one_f_one_b,  ///< PP-p-1 warm-up forwards on stage p, then one forward one backward
  interleaved,  ///< Megatron's interleaved 1F1B over V model chunks per stage
};

/// "seed", "gpipe", "1f1b", "interleaved".
std::string_view to_string(ScheduleKind kind);
/// Parses the names above; throws UsageError listing them.
ScheduleKind parse_schedule_kind(std::string_view text);

/// What a schedule is built for: its kind, PP stages, M micro-batches, V chunks per stage.
struct ScheduleSpec {
  ScheduleKind kind = ScheduleKind::seed;
  int pp = 1;
  int microbatches = 1;
  int virtual_stages = 1;

  /// Throws UsageError (one line) for a degree below 1 or absurdly large, --microbatches
  /// other than 1 with the seed schedule, V > 1 with another schedule than interleaved, or
  /// interleaved with M > PP not a multiple of PP (its micro-batch groups would not fill).
  void validate() const;
  /// validate(), and that the model splits: M divides the batch B (micro-batches hold
  /// whole samples) and PP·V divides the layers L.
  void validate(const ModelShape& shape) const;
  /// Number of virtual stages, PP·V.
  int virtual_count() const { return pp * virtual_stages; }
  /// The stage holding virtual stage k.
  int stage_of(int k) const { return k % pp; }
  /// The chunk (on its stage) of virtual stage k.
  int chunk_of(int k) const { return k / pp; }
  /// The virtual stage of chunk c on stage p.
  int virtual_stage(int p, int c) const { return c * pp + p; }
  /// "1f1b PP2 M4" (with " V2" when V > 1).
  std::string describe() const;

  friend bool operator==(const ScheduleSpec&, const ScheduleSpec&) = default;
};

/// Forward or backward.
enum class PassKind { forward, backward };

/// One micro-batch through one model chunk of a stage.
struct Pass {
  PassKind kind = PassKind::forward;
  int microbatch = 0;
  int chunk = 0;
  friend bool operator==(const Pass&, const Pass&) = default;
};

/// What crosses between neighbouring stages: activations forward, their gradients back.
enum class Payload { activation, gradient };

/// One point-to-point transfer of a communication step. The micro-batch and chunk are this
/// stage's: a send carries the output of (microbatch, chunk) (an activation after its
/// forward, an input gradient after its backward), a receive brings the input that
/// (microbatch, chunk) needs (an activation before its forward, an output gradient before
/// its backward). `peer` is the other stage (its PP group rank).
struct Transfer {
  bool send = true;
  Payload payload = Payload::activation;
  int microbatch = 0;
  int chunk = 0;
  int peer = 0;
  friend bool operator==(const Transfer&, const Transfer&) = default;
};

/// A compute pass, or a communication step whose transfers are posted in order, then
/// waited for in order.
struct Step {
  bool compute = true;
  Pass pass;                        ///< when compute
  std::vector<Transfer> transfers;  ///< when not compute
  friend bool operator==(const Step&, const Step&) = default;
};

/// A compute step / a communication step of the given transfers.
Step compute_step(PassKind kind, int microbatch, int chunk);
Step communication_step(std::vector<Transfer> transfers);

/// The point-to-point tags of the pipeline: activations forward, their gradients backward
/// (the seed's tags; FIFO matching per tag keeps each kind in schedule order).
inline constexpr int kActivationTag = 0;
inline constexpr int kGradientTag = 1;
/// The tag of a payload.
constexpr int tag_of(Payload payload) {
  return payload == Payload::activation ? kActivationTag : kGradientTag;
}

/// Messages a stage's ranks send and receive in one step of a schedule.
struct StageMessages {
  int sent = 0;
  int received = 0;
  int total() const { return sent + received; }
};

/// A whole schedule: per stage, the steps its ranks run in order.
struct Schedule {
  ScheduleSpec spec;
  std::vector<std::vector<Step>> stages;  ///< indexed by stage

  /// Messages per stage, counted from the transfers.
  std::vector<StageMessages> messages() const;
  /// Each stage's compute passes in order: "F0 F1 B0 ..." ("F0.1" for chunk 1 when V > 1).
  std::string compute_order(int stage) const;
  /// The most forward passes of a stage whose backward has not run yet, at any step: how
  /// many micro-batches' activations the stage keeps at once (GPipe M, 1F1B PP-p).
  int peak_in_flight(int stage) const;
};

/// "m3" (V = 1) or "m3 c1": a micro-batch and chunk as tables and reports name them.
std::string microbatch_label(int microbatch, int chunk, int virtual_stages);
/// "F m3", "B m3 c1", "send act m3 -> 1", "recv grad m1 <- 2".
std::string describe(const Pass& pass, int virtual_stages);
std::string describe(const Transfer& transfer, int virtual_stages);
/// A step: its pass, or its transfers joined by ", ".
std::string describe(const Step& step, int virtual_stages);

}  // namespace ranklab
