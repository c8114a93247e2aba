// The built-in pipeline schedules (issue 6 §1), as data (model/schedule.hpp):
//
//   seed         the seed's whole-batch step (shared/seeds/000 §2.3): receive, forward,
//                send, receive the gradient, backward, send it back, each a blocking call
//   gpipe        GPipe (Huang et al. 2019): F0 F1 ... F(M-1), then B0 ... B(M-1)
//   1f1b         PipeDream-flush / Megatron's 1F1B (Narayanan et al. 2021): stage p runs
//                min(PP-p-1, M) warm-up forwards, then alternates one forward and one
//                backward, then drains the remaining backwards
//   interleaved  Megatron's interleaved 1F1B (forward_backward_pipelining_with_interleaving):
//                V model chunks per stage; micro-batches go in groups of G = min(PP, M)
//                through chunk 0, then the same group through chunk 1, ... (Megatron's
//                get_schedule_table; M is a multiple of G); stage p warms up with
//                min(2(PP-p-1) + (V-1)G, M·V) forwards (all M·V when M = PP, Megatron's
//                all-warm-up case), then runs 1F1B iterations of one forward and one
//                backward, backwards visiting the chunks in reverse, then drains
//
// Every builder but seed only orders the compute passes, in rounds: the passes a stage
// runs between two exchanges (one pass for GPipe and 1F1B, whose Megatron code exchanges
// after every pass; a steady iteration's forward and backward for interleaved, which
// exchanges once per iteration). with_communication then inserts the transfers the same
// way for all of them, by running the rounds: in each round every stage runs its next
// round if each of its passes has its input, then every output of the round goes to its
// consumer in one communication step on each side (both post together, as Megatron's
// batched p2p calls do). A stage may thus receive an input before it needs it (Megatron's
// interleaved schedule does too). Each round's transfers pair up among the stages, so the
// schedule completes under rendezvous sends by construction; the validator checks it
// anyway. For M = 1, gpipe's round schedule is the seed's call for call.
#pragma once

#include <vector>

#include "model/schedule.hpp"

namespace ranklab {

/// The schedule of `spec`; throws UsageError if spec.validate() does.
Schedule build_schedule(const ScheduleSpec& spec);

/// The passes a stage runs back to back between two exchanges.
using Round = std::vector<Pass>;

/// The compute rounds of stage `stage` as `spec`'s kind runs them.
std::vector<Round> compute_rounds(const ScheduleSpec& spec, int stage);

/// The compute passes of stage `stage` in the order `spec`'s kind runs them (its rounds,
/// flattened).
std::vector<Pass> compute_order(const ScheduleSpec& spec, int stage);

/// A schedule from per-stage compute rounds (one list per stage), with the communication
/// steps inserted as described above. Throws UsageError if the rounds cannot run (a round
/// in which no stage's next round has its inputs, e.g. a backward before its forward).
Schedule with_communication(const ScheduleSpec& spec,
                            const std::vector<std::vector<Round>>& rounds);
/// The same with every pass a round of its own.
Schedule with_communication(const ScheduleSpec& spec, const std::vector<std::vector<Pass>>& orders);

}  // namespace ranklab
