// Pipeline-parallel bugs: a toy 1F1B pipeline (Narayanan et al., PipeDream-Flush; Megatron's
// forward_backward_pipelining_without_interleaving) with one-line bugs in its send/recv
// ordering, its warm-up count, its peers and its tags, and a message the network loses.
//
// Stage p of PP runs M micro-batches: min(PP - p - 1, M) warm-up forwards, then one
// forward and one backward at a time, then the remaining backwards. Its point-to-point
// steps, as in Megatron's p2p_communication:
//   recv_forward / send_forward          activations from p-1 / to p+1 (tag 0)
//   recv_backward / send_backward        gradients from p+1 / to p-1 (tag 1)
//   send_forward_recv_backward           the stage sends, then receives
//   send_backward_recv_forward           the stage receives, then sends: the mirror image,
//                                        so two neighbours never both send first
// Values: micro-batch m enters stage 0 as m; each stage's forward and backward add 1 (a
// TP-sharded toy layer), the loss gradient is the output, so stage 0's input gradient of
// micro-batch m is m + 2 PP, which stage 0 checks.
#include <algorithm>
#include <deque>

#include "cli/scenarios/catalogue.hpp"
#include "comm/errors.hpp"
#include "model/parallel_step.hpp"

namespace ranklab::cli {
namespace {

/// The one-line bugs the scenarios switch on.
struct PipelineBugs {
  bool both_send_first = false;         ///< send_backward_recv_forward sends first
  int warmup_offset = 0;                ///< warm-up forwards = PP - p - 1 + offset
  bool backward_from_previous = false;  ///< recv_backward from (p - 1) mod PP, not p + 1
  int activation_recv_tag = kActivationTag;  ///< the tag recv_forward asks for
};

class ToyPipeline {
 public:
  ToyPipeline(ParallelLayout& layout, std::size_t count, PipelineBugs bugs)
      : tp_(layout.tensor_parallel()),
        pp_(layout.pipeline_parallel()),
        p_(layout.coords().p),
        stages_(layout.config().pp),
        count_(count),
        bugs_(bugs) {}

  /// One 1F1B step over `microbatches` micro-batches.
  void run(int microbatches) {
    const bool first = p_ == 0, last = p_ == stages_ - 1;
    const int warmup = std::clamp(stages_ - p_ - 1 + bugs_.warmup_offset, 0, microbatches);
    const int steady = microbatches - warmup;
    std::vector<float> x;
    for (int i = 0; i < warmup; ++i) {
      if (!first) x = recv_forward();
      forward(x);
      if (!last) send_forward(x);
    }
    if (steady > 0 && !first) x = recv_forward();
    for (int i = 0; i < steady; ++i) {
      forward(x);
      std::vector<float> g = last ? take_output() : send_forward_recv_backward(x);
      backward(g);
      if (first) continue;
      if (i + 1 == steady) {
        send_backward(g);
      } else {
        x = send_backward_recv_forward(g);
      }
    }
    for (int i = 0; i < warmup; ++i) {
      std::vector<float> g = last ? take_output() : recv_backward();
      backward(g);
      if (!first) send_backward(g);
    }
  }

 private:
  // The stage's layer on the next micro-batch; stage 0 makes its input, the last stage
  // keeps its output for the loss.
  void forward(std::vector<float>& x) {
    if (p_ == 0) x.assign(count_, static_cast<float>(next_forward_));
    ++next_forward_;
    toy_layer(tp_, x);
    if (p_ == stages_ - 1) outputs_.push_back(x);
  }

  void backward(std::vector<float>& g) {
    toy_layer(tp_, g);
    if (p_ == 0) {
      expect_all(g, static_cast<float>(next_backward_ + 2 * stages_), tp_.global_rank(tp_.rank()),
                 "stage 0's input gradient");
    }
    ++next_backward_;
  }

  // The loss gradient of the oldest micro-batch not yet backwarded: its output (MSE with a
  // zero target, up to a factor).
  std::vector<float> take_output() {
    std::vector<float> g = std::move(outputs_.front());
    outputs_.pop_front();
    return g;
  }

  std::vector<float> recv_forward() {
    std::vector<float> x(count_);
    pp_.recv(std::span(x), p_ - 1, bugs_.activation_recv_tag);
    return x;
  }
  void send_forward(const std::vector<float>& y) {
    pp_.send(std::span(y), p_ + 1, kActivationTag);
  }
  std::vector<float> recv_backward() {
    std::vector<float> g(count_);
    const int from = bugs_.backward_from_previous ? (p_ + stages_ - 1) % stages_ : p_ + 1;
    pp_.recv(std::span(g), from, kGradientTag);
    return g;
  }
  void send_backward(const std::vector<float>& g) {
    pp_.send(std::span(g), p_ - 1, kGradientTag);
  }
  std::vector<float> send_forward_recv_backward(const std::vector<float>& y) {
    send_forward(y);
    return recv_backward();
  }
  std::vector<float> send_backward_recv_forward(const std::vector<float>& g) {
    if (bugs_.both_send_first) {
      send_backward(g);
      return recv_forward();
    }
    std::vector<float> x = recv_forward();
    send_backward(g);
    return x;
  }

  Communicator& tp_;
  Communicator& pp_;
  int p_;
  int stages_;
  std::size_t count_;
  PipelineBugs bugs_;
  int next_forward_ = 0;
  int next_backward_ = 0;
  std::deque<std::vector<float>> outputs_;  // last stage: outputs awaiting their backward
};

// A scenario body: the layout, then one pipelined step with `bugs` if `buggy`.
auto pipeline(ParallelConfig config, int microbatches, PipelineBugs bugs) {
  return [=](bool buggy) {
    return [=](Communicator& world, const ScenarioParams& params, ScenarioOutput& out) {
      ParallelLayout layout(world, config);
      ToyPipeline(layout, params.count, buggy ? bugs : PipelineBugs{}).run(microbatches);
      if (world.rank() == 0) {
        out.say(0, fmt::format("{} micro-batches through {} stages: stage 0's gradients match",
                               microbatches, config.pp));
      }
    };
  };
}

}  // namespace

std::vector<Scenario> pipeline_scenarios() {
  std::vector<Scenario> out;
  add_bug_and_twin(
      out,
      {.name = "pp-both-send",
       .summary = "TP2 PP2, 1F1B: send_backward_recv_forward sends before it receives, as its "
                  "neighbour does: send cycle",
       .default_world = 4,
       .expect = {RunStatus::deadlock, CulpritKind::send_cycle, {0, 2}}},
      {.name = "pp-both-send-fixed",
       .summary = "the same pipeline receiving first on the way back: passes"},
      pipeline({.tp = 2, .pp = 2, .dp = 1}, 4, {.both_send_first = true}));
  add_bug_and_twin(
      out,
      {.name = "1f1b-warmup",
       .summary = "PP4, 1F1B with one warm-up forward too few (PP - p - 2): stages 2 and 3 "
                  "both wait to receive",
       .default_world = 4,
       .expect = {RunStatus::deadlock, CulpritKind::recv_cycle, {2}}},
      {.name = "1f1b-warmup-fixed", .summary = "the right warm-up count: passes"},
      pipeline({.tp = 1, .pp = 4, .dp = 1}, 6, {.warmup_offset = -1}));
  add_bug_and_twin(
      out,
      {.name = "backward-wrong-stage",
       .summary = "PP4: recv_backward from the previous stage (wrapping around) instead of the "
                  "next: source mismatch",
       .default_world = 4,
       .expect = {RunStatus::deadlock, CulpritKind::source_mismatch, {3, 2}}},
      {.name = "backward-wrong-stage-fixed", .summary = "receiving from the next stage: passes"},
      pipeline({.tp = 1, .pp = 4, .dp = 1}, 2, {.backward_from_previous = true}));
  add_bug_and_twin(
      out,
      {.name = "tag-mismatch",
       .summary = "TP2 PP2: the next stage receives activations with the gradient tag: tag "
                  "mismatch",
       .default_world = 4,
       .expect = {RunStatus::deadlock, CulpritKind::tag_mismatch, {0, 2}}},
      {.name = "tag-mismatch-fixed", .summary = "the activation tag on both sides: passes"},
      pipeline({.tp = 2, .pp = 2, .dp = 1}, 2, {.activation_recv_tag = kGradientTag}));
  add_bug_and_twin(
      out,
      {.name = "lost-message",
       .summary = "TP2 PP2 DP2: the network loses stage 0's first activation (fault "
                  "drop:0->2#0): the deadlock report names the message",
       .default_world = 8,
       .faults = {"drop:0->2#0"},
       .expect = {RunStatus::deadlock, CulpritKind::lost_message, {0, 2}}},
      {.name = "lost-message-fixed", .summary = "the same pipeline on a network that delivers: passes"},
      pipeline({.tp = 2, .pp = 2, .dp = 2}, 2, {}));
  return out;
}

}  // namespace ranklab::cli
