#include "model/schedule_builders.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "traces/error.hpp"

namespace ranklab {

namespace {

Pass forward(int microbatch, int chunk = 0) {
  return {.kind = PassKind::forward, .microbatch = microbatch, .chunk = chunk};
}
Pass backward(int microbatch, int chunk = 0) {
  return {.kind = PassKind::backward, .microbatch = microbatch, .chunk = chunk};
}

// The seed's step, call for call (model/pipeline_step.hpp runs it into the seed's trace).
std::vector<Step> seed_stage(const ScheduleSpec& spec, int p) {
  const bool first = p == 0;
  const bool last = p == spec.pp - 1;
  const auto one = [](bool send, Payload payload, int peer) {
    return communication_step({{.send = send, .payload = payload, .peer = peer}});
  };
  std::vector<Step> steps;
  if (!first) steps.push_back(one(false, Payload::activation, p - 1));
  steps.push_back(compute_step(PassKind::forward, 0, 0));
  if (!last) {
    steps.push_back(one(true, Payload::activation, p + 1));
    steps.push_back(one(false, Payload::gradient, p + 1));
  }
  steps.push_back(compute_step(PassKind::backward, 0, 0));
  if (!first) steps.push_back(one(true, Payload::gradient, p - 1));
  return steps;
}

// A stage's compute in rounds (see with_communication): each pass alone, as GPipe and 1F1B
// communicate after every pass.
std::vector<Round> one_per_round(const std::vector<Pass>& passes) {
  std::vector<Round> out;
  for (const Pass& pass : passes) out.push_back({pass});
  return out;
}

std::vector<Pass> gpipe_order(const ScheduleSpec& spec) {
  std::vector<Pass> out;
  for (int m = 0; m < spec.microbatches; ++m) out.push_back(forward(m));
  for (int m = 0; m < spec.microbatches; ++m) out.push_back(backward(m));
  return out;
}

std::vector<Pass> one_f_one_b_order(const ScheduleSpec& spec, int p) {
  const int m_count = spec.microbatches;
  const int warmup = std::min(spec.pp - p - 1, m_count);
  std::vector<Pass> out;
  for (int m = 0; m < warmup; ++m) out.push_back(forward(m));
  for (int i = 0; i < m_count - warmup; ++i) {
    out.push_back(forward(warmup + i));
    out.push_back(backward(i));
  }
  for (int m = m_count - warmup; m < m_count; ++m) out.push_back(backward(m));
  return out;
}

// Megatron's schedule table: (micro-batch, chunk) of each forward in order. Groups of G
// micro-batches go through every chunk before the next group starts (G divides M:
// ScheduleSpec::validate).
std::vector<Pass> interleaved_table(const ScheduleSpec& spec, int group) {
  std::vector<Pass> out;
  for (int first = 0; first < spec.microbatches; first += group) {
    for (int c = 0; c < spec.virtual_stages; ++c) {
      for (int m = first; m < first + group; ++m) out.push_back(forward(m, c));
    }
  }
  return out;
}

// Megatron's forward_backward_pipelining_with_interleaving, as rounds: the warm-up forwards
// one per round, then each steady iteration's forward and backward in one round (Megatron
// exchanges once per iteration, send_forward_backward_recv_forward_backward), then the
// remaining backwards one per round. With M = PP every pass is warm-up (Megatron's
// all_warmup_microbatches). A round per pass instead would put a stage's backward against
// its neighbours' forwards (the warm-ups differ by two), and each exchange would wait for
// the slower one: with a backward twice a forward, the steady state would idle a third.
std::vector<Round> interleaved_rounds(const ScheduleSpec& spec, int p) {
  const int group = std::min(spec.pp, spec.microbatches);
  const std::vector<Pass> table = interleaved_table(spec, group);
  const int total = static_cast<int>(table.size());
  // Backward k runs table[k]'s micro-batch through the chunks in reverse.
  const auto backward_k = [&](int k) {
    const Pass& f = table[static_cast<std::size_t>(k)];
    return backward(f.microbatch, spec.virtual_stages - 1 - f.chunk);
  };
  const int warmup =
      spec.microbatches == spec.pp
          ? total
          : std::min(2 * (spec.pp - p - 1) + (spec.virtual_stages - 1) * group, total);
  std::vector<Round> out;
  for (int k = 0; k < warmup; ++k) out.push_back({table[static_cast<std::size_t>(k)]});
  for (int i = 0; i < total - warmup; ++i) {
    out.push_back({table[static_cast<std::size_t>(warmup + i)], backward_k(i)});
  }
  for (int k = total - warmup; k < total; ++k) out.push_back({backward_k(k)});
  return out;
}

// The send of pass's output, when another stage consumes it, and the consumer's receive.
struct Delivery {
  int from = 0;
  int to = 0;
  Transfer send;
  Transfer recv;
};

std::optional<Delivery> delivery_of(const ScheduleSpec& spec, int p, const Pass& pass) {
  const int k = spec.virtual_stage(p, pass.chunk);
  const bool fwd = pass.kind == PassKind::forward;
  const int to = fwd ? k + 1 : k - 1;
  if (to < 0 || to >= spec.virtual_count() || spec.stage_of(to) == p) return std::nullopt;
  const Payload payload = fwd ? Payload::activation : Payload::gradient;
  const int q = spec.stage_of(to);
  return Delivery{.from = p,
                  .to = q,
                  .send = {.send = true,
                           .payload = payload,
                           .microbatch = pass.microbatch,
                           .chunk = pass.chunk,
                           .peer = q},
                  .recv = {.send = false,
                           .payload = payload,
                           .microbatch = pass.microbatch,
                           .chunk = spec.chunk_of(to),
                           .peer = p}};
}

// The simulation of with_communication: what each stage has done and received.
class RoundSimulation {
 public:
  explicit RoundSimulation(const ScheduleSpec& spec)
      : spec_(spec), size_(static_cast<std::size_t>(spec.microbatches * spec.virtual_stages)) {
    for (int p = 0; p < spec.pp; ++p) {
      done_.emplace_back(2 * size_, false);
      arrived_.emplace_back(2 * size_, false);
    }
  }

  // Whether stage p can run `pass` now: its forward first, and its input is there.
  bool ready(int p, const Pass& pass) const {
    const int k = spec_.virtual_stage(p, pass.chunk);
    const bool fwd = pass.kind == PassKind::forward;
    if (!fwd && !done(p, PassKind::forward, pass.microbatch, pass.chunk)) return false;
    const int from = fwd ? k - 1 : k + 1;
    if (from < 0 || from >= spec_.virtual_count()) return true;  // the data, or the loss
    if (spec_.stage_of(from) == p) return done(p, pass.kind, pass.microbatch, spec_.chunk_of(from));
    return arrived_[static_cast<std::size_t>(p)][slot(pass.kind, pass.microbatch, pass.chunk)];
  }

  void run(int p, const Pass& pass) { set_done(p, pass, true); }
  // Takes back run(p, pass): a round that cannot run whole does not run.
  void undo(int p, const Pass& pass) { set_done(p, pass, false); }

  void deliver(const Delivery& d) {
    const PassKind consumer =
        d.recv.payload == Payload::activation ? PassKind::forward : PassKind::backward;
    arrived_[static_cast<std::size_t>(d.to)][slot(consumer, d.recv.microbatch, d.recv.chunk)] =
        true;
  }

 private:
  void set_done(int p, const Pass& pass, bool value) {
    done_[static_cast<std::size_t>(p)][slot(pass.kind, pass.microbatch, pass.chunk)] = value;
  }
  bool done(int p, PassKind kind, int m, int c) const {
    return done_[static_cast<std::size_t>(p)][slot(kind, m, c)];
  }
  std::size_t slot(PassKind kind, int m, int c) const {
    return (kind == PassKind::forward ? 0 : size_) +
           static_cast<std::size_t>(m * spec_.virtual_stages + c);
  }

  const ScheduleSpec& spec_;
  std::size_t size_;
  std::vector<std::vector<bool>> done_;     // [stage][forward | backward of (m, c)]
  std::vector<std::vector<bool>> arrived_;  // [stage][input of that pass received]
};

}  // namespace

std::vector<Round> compute_rounds(const ScheduleSpec& spec, int stage) {
  switch (spec.kind) {
    case ScheduleKind::seed:
      return one_per_round({forward(0), backward(0)});
    case ScheduleKind::gpipe:
      return one_per_round(gpipe_order(spec));
    case ScheduleKind::one_f_one_b:
      return one_per_round(one_f_one_b_order(spec, stage));
    case ScheduleKind::interleaved:
      return interleaved_rounds(spec, stage);
  }
  return {};
}

std::vector<Pass> compute_order(const ScheduleSpec& spec, int stage) {
  std::vector<Pass> out;
  for (const Round& round : compute_rounds(spec, stage)) {
    out.insert(out.end(), round.begin(), round.end());
  }
  return out;
}

Schedule with_communication(const ScheduleSpec& spec,
                            const std::vector<std::vector<Pass>>& orders) {
  std::vector<std::vector<Round>> rounds;
  for (const std::vector<Pass>& order : orders) rounds.push_back(one_per_round(order));
  return with_communication(spec, rounds);
}

Schedule with_communication(const ScheduleSpec& spec,
                            const std::vector<std::vector<Round>>& rounds) {
  spec.validate();
  if (rounds.size() != static_cast<std::size_t>(spec.pp)) {
    throw UsageError(fmt::format("schedule {}: {} compute orders for PP={}", spec.describe(),
                                 rounds.size(), spec.pp));
  }
  Schedule out{.spec = spec, .stages = std::vector<std::vector<Step>>(rounds.size())};
  RoundSimulation sim(spec);
  std::vector<std::size_t> next(rounds.size(), 0);
  std::vector<std::vector<Transfer>> exchange(rounds.size());
  for (;;) {
    // Compute: each stage runs its next round if it can, all of it (each pass's input there
    // once the round's earlier passes have run) or none of it.
    bool ran = false;
    bool left = false;
    std::vector<Delivery> deliveries;
    for (int p = 0; p < spec.pp; ++p) {
      const auto sp = static_cast<std::size_t>(p);
      if (next[sp] == rounds[sp].size()) continue;
      left = true;
      const Round& round = rounds[sp][next[sp]];
      std::size_t runnable = 0;
      for (; runnable < round.size() && sim.ready(p, round[runnable]); ++runnable) {
        sim.run(p, round[runnable]);
      }
      if (runnable < round.size()) {
        for (std::size_t i = 0; i < runnable; ++i) sim.undo(p, round[i]);
        continue;
      }
      for (const Pass& pass : round) {
        out.stages[sp].push_back(compute_step(pass.kind, pass.microbatch, pass.chunk));
        if (auto d = delivery_of(spec, p, pass)) deliveries.push_back(*d);
      }
      ++next[sp];
      ran = true;
    }
    if (!left) break;
    if (!ran) {
      std::string waits = "its end";
      if (next[0] < rounds[0].size()) {
        waits.clear();
        for (const Pass& pass : rounds[0][next[0]]) {
          if (!waits.empty()) waits += ", ";
          waits += describe(pass, spec.virtual_stages);
        }
      }
      throw UsageError(fmt::format(
          "schedule {}: the compute orders cannot run: no stage's next pass has its input "
          "(stage 0 waits at {})",
          spec.describe(), waits));
    }
    // Communicate: every output of the round goes to its consumer, both sides posting in
    // the same step; a stage's sends come before its receives.
    for (const Delivery& d : deliveries)
      exchange[static_cast<std::size_t>(d.from)].push_back(d.send);
    for (const Delivery& d : deliveries) {
      exchange[static_cast<std::size_t>(d.to)].push_back(d.recv);
      sim.deliver(d);
    }
    for (std::size_t p = 0; p < exchange.size(); ++p) {
      if (exchange[p].empty()) continue;
      out.stages[p].push_back(communication_step(std::move(exchange[p])));
      exchange[p].clear();
    }
  }
  return out;
}

Schedule build_schedule(const ScheduleSpec& spec) {
  spec.validate();
  if (spec.kind == ScheduleKind::seed) {
    Schedule out{.spec = spec};
    for (int p = 0; p < spec.pp; ++p) out.stages.push_back(seed_stage(spec, p));
    return out;
  }
  std::vector<std::vector<Round>> rounds;
  for (int p = 0; p < spec.pp; ++p) rounds.push_back(compute_rounds(spec, p));
  return with_communication(spec, rounds);
}

}  // namespace ranklab
