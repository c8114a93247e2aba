#include "model/schedule_validator.hpp"

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <tuple>
#include <vector>

#include "collectives/communicator.hpp"

namespace ranklab {

namespace {

// A problem at one step of one stage; the first of several is the one with the smallest
// step index, then the smallest stage.
struct Issue {
  int step = 0;
  int stage = 0;
  std::string what;
};

bool before(const Issue& a, const Issue& b) {
  return std::tie(a.step, a.stage) < std::tie(b.step, b.stage);
}

void keep_first(std::optional<Issue>& first, Issue issue) {
  if (!first || before(issue, *first)) first = std::move(issue);
}

// "stage 1, step 4 (recv grad m2 <- 2)", or "stage 1, after its last step" for step == size.
std::string where(const Schedule& s, int stage, int step) {
  const auto& steps = s.stages[static_cast<std::size_t>(stage)];
  if (step >= static_cast<int>(steps.size())) {
    return fmt::format("stage {}, after its last step ({})", stage, steps.size());
  }
  return fmt::format("stage {}, step {} ({})", stage, step,
                     describe(steps[static_cast<std::size_t>(step)], s.spec.virtual_stages));
}

std::string one_line(const Schedule& s, const Issue& issue) {
  return fmt::format("schedule {}: {}: {}", s.spec.describe(), where(s, issue.stage, issue.step),
                     issue.what);
}

// Check 1 for one stage: what has run, been received and been sent, step by step.
class StageChecker {
 public:
  StageChecker(const ScheduleSpec& spec, int stage)
      : spec_(spec),
        stage_(stage),
        size_(static_cast<std::size_t>(spec.microbatches * spec.virtual_stages)) {
    for (auto* flags : {&forwarded_, &backwarded_, &act_in_, &grad_in_, &act_out_, &grad_out_}) {
      flags->assign(size_, false);
    }
  }

  // The problem of `step`, if any; updates the state.
  std::optional<std::string> visit(const Step& step) {
    if (step.compute) return visit(step.pass);
    for (const Transfer& t : step.transfers) {
      if (auto problem = visit(t)) return problem;
    }
    return std::nullopt;
  }

  // What never happened once every step has run.
  std::optional<std::string> at_end() const {
    for (int m = 0; m < spec_.microbatches; ++m) {
      for (int c = 0; c < spec_.virtual_stages; ++c) {
        const std::string what = microbatch_label(m, c, spec_.virtual_stages);
        if (!forwarded_[index(m, c)]) return fmt::format("the forward of {} never runs", what);
        if (!backwarded_[index(m, c)]) return fmt::format("the backward of {} never runs", what);
      }
    }
    return std::nullopt;
  }

 private:
  std::size_t index(int m, int c) const {
    return static_cast<std::size_t>(m * spec_.virtual_stages + c);
  }

  std::optional<std::string> check_range(int m, int c) const {
    if (m < 0 || m >= spec_.microbatches) {
      return fmt::format("micro-batch {} is outside [0, {})", m, spec_.microbatches);
    }
    if (c < 0 || c >= spec_.virtual_stages) {
      return fmt::format("chunk {} is outside [0, {})", c, spec_.virtual_stages);
    }
    return std::nullopt;
  }

  std::optional<std::string> visit(const Pass& pass) {
    const int m = pass.microbatch;
    const int c = pass.chunk;
    if (auto bad = check_range(m, c)) return bad;
    const std::size_t i = index(m, c);
    const std::string what = microbatch_label(m, c, spec_.virtual_stages);
    const int k = spec_.virtual_stage(stage_, c);
    if (pass.kind == PassKind::forward) {
      if (forwarded_[i]) return fmt::format("the forward of {} runs a second time", what);
      if (auto missing = missing_input(k - 1, m, act_in_[i], forwarded_, "activation")) {
        return missing;
      }
      forwarded_[i] = true;
      return std::nullopt;
    }
    if (!forwarded_[i]) return fmt::format("the backward of {} runs before its forward", what);
    if (backwarded_[i]) return fmt::format("the backward of {} runs a second time", what);
    if (k + 1 < spec_.virtual_count()) {
      if (auto missing = missing_input(k + 1, m, grad_in_[i], backwarded_, "output gradient")) {
        return missing;
      }
    }
    backwarded_[i] = true;
    return std::nullopt;
  }

  // A pass of micro-batch m needs what virtual stage `from` produced: nothing when `from`
  // is outside the model (the data, or the loss for a backward), the stage's own pass of
  // chunk chunk_of(from) when it holds `from`, else a receive.
  std::optional<std::string> missing_input(int from, int m, bool received,
                                           const std::vector<bool>& done, const char* what) const {
    if (from < 0 || from >= spec_.virtual_count()) return std::nullopt;
    const int producer = spec_.stage_of(from);
    if (producer == stage_) {
      if (done[index(m, spec_.chunk_of(from))]) return std::nullopt;
      return fmt::format("its {} comes from chunk {} of this stage, whose pass for m{} has not run",
                         what, spec_.chunk_of(from), m);
    }
    if (received) return std::nullopt;
    return fmt::format("its {} has not been received (no earlier recv from stage {})", what,
                       producer);
  }

  std::optional<std::string> visit(const Transfer& t) {
    if (auto bad = check_range(t.microbatch, t.chunk)) return bad;
    if (t.peer < 0 || t.peer >= spec_.pp || t.peer == stage_) {
      return fmt::format("peer {} is not another stage of PP={}", t.peer, spec_.pp);
    }
    const std::size_t i = index(t.microbatch, t.chunk);
    const int k = spec_.virtual_stage(stage_, t.chunk);
    const bool act = t.payload == Payload::activation;
    // Activations go to virtual stage k+1 and come from k-1; gradients the other way.
    const int other = (act == t.send) ? k + 1 : k - 1;
    const std::string what =
        fmt::format("{} of {}", act ? "activation" : "gradient",
                    microbatch_label(t.microbatch, t.chunk, spec_.virtual_stages));
    if (other < 0 || other >= spec_.virtual_count()) {
      return fmt::format("virtual stage {} has no {} to {} (it is the {} of the model)", k,
                         act ? "activation" : "gradient", t.send ? "send" : "receive",
                         other < 0 ? "start" : "end");
    }
    if (spec_.stage_of(other) != t.peer) {
      return fmt::format("the {} {} stage {}, not stage {}", what,
                         t.send ? "goes to" : "comes from", spec_.stage_of(other), t.peer);
    }
    std::vector<bool>& flag = t.send ? (act ? act_out_ : grad_out_) : (act ? act_in_ : grad_in_);
    if (flag[i])
      return fmt::format("the {} is {} a second time", what, t.send ? "sent" : "received");
    if (t.send && !(act ? forwarded_ : backwarded_)[i]) {
      return fmt::format("sends the {} before its {} has run", what, act ? "forward" : "backward");
    }
    flag[i] = true;
    return std::nullopt;
  }

  const ScheduleSpec& spec_;
  int stage_;
  std::size_t size_;
  std::vector<bool> forwarded_, backwarded_, act_in_, grad_in_, act_out_, grad_out_;
};

std::optional<Issue> check_stages(const Schedule& s) {
  std::optional<Issue> first;
  for (int p = 0; p < s.spec.pp; ++p) {
    StageChecker checker(s.spec, p);
    const auto& steps = s.stages[static_cast<std::size_t>(p)];
    std::optional<std::string> problem;
    int at = 0;
    for (; at < static_cast<int>(steps.size()) && !problem; ++at) {
      problem = checker.visit(steps[static_cast<std::size_t>(at)]);
    }
    if (problem) {
      keep_first(first, {at - 1, p, *problem});
    } else if ((problem = checker.at_end())) {
      keep_first(first, {at, p, *problem});
    }
  }
  return first;
}

// One side of a channel: the steps of one stage's transfers to or from one peer.
struct Posted {
  int step = 0;
  Transfer transfer;
};

std::vector<Posted> posted(const Schedule& s, int stage, int peer, Payload payload, bool send) {
  std::vector<Posted> out;
  const auto& steps = s.stages[static_cast<std::size_t>(stage)];
  for (std::size_t i = 0; i < steps.size(); ++i) {
    for (const Transfer& t : steps[i].transfers) {
      if (t.send == send && t.peer == peer && t.payload == payload) {
        out.push_back({static_cast<int>(i), t});
      }
    }
  }
  return out;
}

const char* ordinal_suffix(std::size_t n) {
  if (n % 100 >= 11 && n % 100 <= 13) return "th";
  return n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
}

// Check 2: the i-th send from src to dst of a payload meets dst's i-th receive from src.
std::optional<Issue> check_channels(const Schedule& s) {
  const ScheduleSpec& spec = s.spec;
  const int v = spec.virtual_stages;
  std::optional<Issue> first;
  for (int src = 0; src < spec.pp; ++src) {
    for (int dst = 0; dst < spec.pp; ++dst) {
      if (src == dst) continue;
      for (const Payload payload : {Payload::activation, Payload::gradient}) {
        const char* name = payload == Payload::activation ? "activation" : "gradient";
        const std::vector<Posted> sends = posted(s, src, dst, payload, true);
        const std::vector<Posted> recvs = posted(s, dst, src, payload, false);
        const std::size_t common = std::min(sends.size(), recvs.size());
        for (std::size_t i = 0; i < common; ++i) {
          const Transfer& out = sends[i].transfer;
          const Transfer& in = recvs[i].transfer;
          const int k_out = spec.virtual_stage(src, out.chunk);
          const int k_in = spec.virtual_stage(dst, in.chunk);
          const int want = payload == Payload::activation ? k_out + 1 : k_out - 1;
          if (out.microbatch == in.microbatch && k_in == want) continue;
          keep_first(first, {recvs[i].step, dst,
                             fmt::format("its {}{} {} receive from stage {} expects {}, but "
                                         "stage {}'s {}{} {} send (step {}) carries {} of its "
                                         "chunk {}: messages between two stages match in order",
                                         i + 1, ordinal_suffix(i + 1), name, src,
                                         microbatch_label(in.microbatch, in.chunk, v), src, i + 1,
                                         ordinal_suffix(i + 1), name, sends[i].step,
                                         fmt::format("m{}", out.microbatch), out.chunk)});
          break;
        }
        if (sends.size() > common) {
          keep_first(first,
                     {sends[common].step, src,
                      fmt::format("stage {} never receives it (it posts {} {} "
                                  "receive{} from stage {})",
                                  dst, recvs.size(), name, recvs.size() == 1 ? "" : "s", src)});
        } else if (recvs.size() > common) {
          keep_first(first,
                     {recvs[common].step, dst,
                      fmt::format("stage {} never sends it (it sends {} {}{} to stage {})", src,
                                  sends.size(), name, sends.size() == 1 ? "" : "s", dst)});
        }
      }
    }
  }
  return first;
}

// The message of the dry run: micro-batch, virtual stage of the sender, payload.
using Tag3 = std::array<std::int64_t, 3>;

// One rank of the dry run: stage p's steps with no compute; at[p] is the step it is on.
void dry_run_stage(Communicator& world, const Schedule& s, std::vector<int>& at) {
  const int p = world.rank();
  const auto& steps = s.stages[static_cast<std::size_t>(p)];
  std::vector<Tag3> buffers;
  std::vector<Work> works;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    at[static_cast<std::size_t>(p)] = static_cast<int>(i);
    const Step& step = steps[i];
    if (step.compute) continue;
    buffers.assign(step.transfers.size(), Tag3{});
    works.clear();
    for (std::size_t j = 0; j < step.transfers.size(); ++j) {
      const Transfer& t = step.transfers[j];
      const int tag = tag_of(t.payload);
      if (t.send) {
        buffers[j] = {t.microbatch, s.spec.virtual_stage(p, t.chunk),
                      static_cast<std::int64_t>(t.payload)};
        works.push_back(world.isend(std::span<const std::int64_t>(buffers[j]), t.peer, tag));
      } else {
        works.push_back(world.irecv(std::span<std::int64_t>(buffers[j]), t.peer, tag));
      }
    }
    for (std::size_t j = 0; j < works.size(); ++j) {
      works[j].wait();
      const Transfer& t = step.transfers[j];
      if (t.send) continue;
      const int k = s.spec.virtual_stage(p, t.chunk);
      const Tag3 want = {t.microbatch, t.payload == Payload::activation ? k - 1 : k + 1,
                         static_cast<std::int64_t>(t.payload)};
      if (buffers[j] != want) {
        throw ScheduleError(fmt::format(
            "schedule {}: {}: the dry run delivered m{} from virtual stage {} instead",
            s.spec.describe(), where(s, p, static_cast<int>(i)), buffers[j][0], buffers[j][1]));
      }
    }
  }
  at[static_cast<std::size_t>(p)] = static_cast<int>(steps.size());
}

ScheduleVerdict dry_run_verdict(const Schedule& s, const DryRunner& runner) {
  std::vector<int> at(static_cast<std::size_t>(s.spec.pp), 0);
  const DryRunOutcome outcome =
      runner(s.spec.pp, [&](Communicator& world) { dry_run_stage(world, s, at); });
  ScheduleVerdict verdict;
  if (outcome.end == DryRunOutcome::End::ok) {
    for (const StageMessages& m : s.messages()) verdict.messages += m.sent;
    return verdict;
  }
  verdict.details = "dry run (rank r runs stage r):\n" + outcome.details;
  if (outcome.end != DryRunOutcome::End::deadlock) {
    verdict.kind = ScheduleVerdict::Kind::mismatch;
    verdict.problem = outcome.problem;
    return verdict;
  }
  verdict.kind = ScheduleVerdict::Kind::deadlock;
  const auto finished = [&](int p) { return outcome.finished[static_cast<std::size_t>(p)]; };
  std::optional<Issue> first;
  std::string others;
  for (int p = 0; p < s.spec.pp; ++p) {
    if (finished(p)) continue;
    keep_first(first, {at[static_cast<std::size_t>(p)], p, {}});
  }
  for (int p = 0; p < s.spec.pp; ++p) {
    if (finished(p) || p == first->stage) {
      continue;
    }
    others += fmt::format("{}{}", others.empty() ? "" : "; ",
                          where(s, p, at[static_cast<std::size_t>(p)]));
  }
  first->what =
      fmt::format("cannot progress: the dry run under rendezvous sends deadlocks{}",
                  others.empty() ? std::string(" (the other stages finished)")
                                 : fmt::format(", while {} wait{} too", others,
                                               others.find(';') == std::string::npos ? "s" : ""));
  verdict.problem = one_line(s, *first);
  return verdict;
}

}  // namespace

int ScheduleVerdict::exit_code() const {
  switch (kind) {
    case Kind::ok:
      return 0;
    case Kind::invalid:
      return 1;
    case Kind::deadlock:
      return 3;
    case Kind::mismatch:
      return 4;
  }
  return 1;
}

void check_schedule(const Schedule& schedule) {
  schedule.spec.validate();
  if (schedule.stages.size() != static_cast<std::size_t>(schedule.spec.pp)) {
    throw ScheduleError(fmt::format("schedule {}: {} stages listed for PP={}",
                                    schedule.spec.describe(), schedule.stages.size(),
                                    schedule.spec.pp));
  }
  if (auto issue = check_stages(schedule)) throw ScheduleError(one_line(schedule, *issue));
  if (auto issue = check_channels(schedule)) throw ScheduleError(one_line(schedule, *issue));
}

ScheduleVerdict validate_schedule(const Schedule& schedule, const DryRunner& dry_run) {
  try {
    check_schedule(schedule);
  } catch (const UsageError& e) {
    return {.kind = ScheduleVerdict::Kind::invalid, .problem = e.what()};
  }
  return dry_run_verdict(schedule, dry_run);
}

void require_valid_schedule(const Schedule& schedule, const DryRunner& dry_run) {
  const ScheduleVerdict verdict = validate_schedule(schedule, dry_run);
  if (!verdict.ok()) throw ScheduleError(verdict.problem);
}

}  // namespace ranklab
