#include "cli/explore.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <map>
#include <mutex>

#include <fmt/format.h>
#include <tbb/task_group.h>

#include "emulator/cluster_thread.hpp"
#include "traces/diff.hpp"

namespace ranklab::cli {
namespace {

// One run of `job` under `policy` and `send_mode` on one thread, recording the schedule into
// `log`.
JobOutcome run_once(const Job& job, const SchedulePolicy& policy, const SendMode& send_mode,
                    std::shared_ptr<ScheduleLog> log = nullptr) {
  ClusterOptions options = job.options();
  options.policy = policy;
  options.send_mode = send_mode;
  options.threads = 1;
  options.schedule_log = std::move(log);
  return job.run(std::move(options));
}

std::string verdict_kind(const JobOutcome& outcome) {
  if (outcome.exit_code == 2) return outcome.check_failed;
  switch (outcome.report.status) {
    case RunStatus::deadlock: return "deadlock";
    case RunStatus::mismatch: return "mismatch";
    case RunStatus::rank_failed: return "rank failure";
    case RunStatus::unsafe:
      return outcome.report.culprit.kind == CulpritKind::request_leak ? "request leak" : "potential deadlock";
    case RunStatus::ok: break;
  }
  return "failure";
}

SchedulePolicy preempt_policy(std::vector<Preemption> preemptions) {
  SchedulePolicy policy;
  policy.kind = SchedulePolicy::Kind::preempt;
  policy.preemptions = std::move(preemptions);
  return policy;
}

bool same_failure(const std::optional<Verdict>& a, const Verdict& b) {
  return a && a->kind == b.kind && a->culprit == b.culprit;
}

// Delta debugging over the preemptions of a failing schedule (explore.hpp).
std::optional<ShrunkSchedule> shrink(const Job& job, const Failure& failure,
                                     const JobOutcome& reference, int budget) {
  int runs = 0;
  const auto attempt = [&](const SchedulePolicy& policy, std::shared_ptr<ScheduleLog> log) {
    ++runs;
    JobOutcome outcome = run_once(job, policy, failure.send_mode, log);
    const bool fails = same_failure(judge(outcome, &reference), failure.verdict);
    return std::make_pair(fails, std::move(outcome));
  };

  // The failing schedule pick by pick, then as a preempt policy listing every pick, which
  // must fail again; its log keeps only the picks that were not FIFO's choice.
  auto picks = std::make_shared<ScheduleLog>();
  if (!attempt(failure.policy, picks).first) return std::nullopt;
  std::vector<Preemption> all;
  for (std::size_t step = 0; step < picks->picks.size(); ++step) {
    all.push_back({step, picks->picks[step]});
  }
  auto log = std::make_shared<ScheduleLog>();
  auto [fails, best] = attempt(preempt_policy(std::move(all)), log);
  if (!fails) return std::nullopt;
  std::vector<Preemption> current = log->deviations;
  const std::size_t before = current.size();

  std::size_t parts = 2;
  while (current.size() > 1 && runs < budget) {
    const std::size_t chunk = (current.size() + parts - 1) / parts;
    bool reduced = false;
    for (std::size_t start = 0; start < current.size() && runs < budget; start += chunk) {
      std::vector<Preemption> candidate(current.begin(), current.begin() + static_cast<std::ptrdiff_t>(start));
      candidate.insert(candidate.end(),
                       current.begin() + static_cast<std::ptrdiff_t>(std::min(start + chunk, current.size())),
                       current.end());
      log = std::make_shared<ScheduleLog>();
      auto [still_fails, outcome] = attempt(preempt_policy(candidate), log);
      // The run's own deviations are the exact schedule it took; keep them only if fewer.
      if (!still_fails || log->deviations.size() >= current.size()) continue;
      current = log->deviations;
      best = std::move(outcome);
      parts = std::max<std::size_t>(parts - 1, 2);
      reduced = true;
      break;
    }
    if (reduced) continue;
    if (chunk == 1) break;
    parts = std::min(parts * 2, current.size());
  }
  // One preemption left: rank order itself (none) passed as schedule 0, so it is minimal.
  return ShrunkSchedule{preempt_policy(current), std::move(best), before, runs};
}

}  // namespace

const JobOutcome& ExploreResult::reference_of(int index) const {
  // schedule_send_mode's choice: odd schedules run under the other mode, when there is one.
  return other_reference && index % 2 == 1 ? *other_reference : reference;
}

SendMode other_send_mode(const SendMode& own) {
  SendMode other;
  if (own.kind == SendMode::Kind::rendezvous) other.kind = SendMode::Kind::eager;
  return other;
}

SendMode schedule_send_mode(const ExploreOptions& options, const SendMode& own, int index) {
  return options.other_send_mode && index % 2 == 1 ? *options.other_send_mode : own;
}

SchedulePolicy schedule_policy(const ExploreOptions& options, int index) {
  SchedulePolicy policy;
  if (index == 0) return policy;
  policy.kind = options.strategy == Strategy::pct ? SchedulePolicy::Kind::pct
                                                  : SchedulePolicy::Kind::random;
  policy.seed = static_cast<std::uint64_t>(index);
  policy.depth = options.pct_depth;
  return policy;
}

std::optional<Verdict> judge(const JobOutcome& outcome, const JobOutcome* reference) {
  if (outcome.exit_code != 0) {
    return Verdict{verdict_kind(outcome), outcome.verdict,
                   outcome.report.culprit.kind == CulpritKind::none
                       ? verdict_kind(outcome)
                       : std::string(culprit_kind_name(outcome.report.culprit))};
  }
  if (reference == nullptr) return std::nullopt;
  if (outcome.results != reference->results) {
    return Verdict{"nondeterminism",
                   "nondeterminism: the results differ from the rank-order schedule's",
                   "nondeterminism"};
  }
  const TraceDiff diff = diff_traces(reference->trace, outcome.trace);
  if (!diff.identical()) {
    return Verdict{"nondeterminism",
                   fmt::format("nondeterminism: the per-rank traces differ from the "
                               "rank-order schedule's ({} of {} ranks)",
                               diff.divergences.size(), diff.ranks_compared),
                   "nondeterminism"};
  }
  return std::nullopt;
}

std::string describe_difference(const JobOutcome& reference, const JobOutcome& other,
                                const std::string& reference_name,
                                const std::string& other_name) {
  std::string out;
  if (reference.results != other.results) {
    out += fmt::format("results under {}:\n{}", reference_name, reference.results);
    out += fmt::format("results under {}:\n{}", other_name, other.results);
  }
  const TraceDiff diff = diff_traces(reference.trace, other.trace);
  if (!diff.identical()) out += format_diff(diff, reference_name, other_name);
  return out;
}

ExploreResult explore(const Job& job, const ExploreOptions& options) {
  ExploreResult result;
  result.planned = std::max(options.runs, 1);
  const auto start = std::chrono::steady_clock::now();
  const SendMode own = job.options().send_mode;
  result.reference = run_once(job, schedule_policy(options, 0), own);
  if (options.other_send_mode) {
    result.other_reference = run_once(job, schedule_policy(options, 0), *options.other_send_mode);
  }
  std::atomic<int> finished{1};
  std::mutex mutex;  // guards failures and progress calls
  if (options.progress) options.progress(1, result.planned);
  std::map<int, Failure> failures;
  if (auto verdict = judge(result.reference, nullptr)) {
    failures.emplace(0, Failure{0, schedule_policy(options, 0), own, result.reference, *verdict});
  }

  std::atomic<int> next{1};
  std::atomic<int> first_failure{failures.empty() ? INT_MAX : 0};
  // `jobs` tasks that each run schedules one after another: at most `jobs` clusters at a
  // time, and no more at once than oneTBB has threads.
  const int jobs = std::max(options.jobs, 1);
  // One job: take indices in order and stop past the first failure. Every index below it is
  // run, so the failure reported is the lowest, whatever the number of jobs.
  const auto run_schedules = [&] {
    for (int i = next++; i < result.planned && i < first_failure.load(); i = next++) {
      const SchedulePolicy policy = schedule_policy(options, i);
      const SendMode send_mode = schedule_send_mode(options, own, i);
      JobOutcome outcome = run_once(job, policy, send_mode);
      std::optional<Verdict> verdict = judge(outcome, &result.reference_of(i));
      const std::lock_guard<std::mutex> lock(mutex);
      if (verdict) {
        failures.emplace(i, Failure{i, policy, send_mode, std::move(outcome),
                                    std::move(*verdict)});
        int seen = first_failure.load();
        while (i < seen && !first_failure.compare_exchange_weak(seen, i)) {
        }
      }
      const int done = ++finished;
      if (options.progress) options.progress(done, result.planned);
    }
  };
  {
    tbb::task_group group;
    for (int w = 0; w < jobs; ++w) {
      // Each job on a cluster thread of its own (emulator/cluster_thread.hpp): its clusters
      // then run right there, one after another, its checks beside them.
      group.run([&] { run_on_cluster_thread(run_schedules); });
    }
    group.wait();
  }
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.executed = finished.load();
  if (failures.empty()) {
    result.runs = result.planned;
    return result;
  }
  result.failure = std::move(failures.begin()->second);
  result.runs = result.failure->index + 1;
  const SchedulePolicy::Kind kind = result.failure->policy.kind;
  if (options.shrink && kind != SchedulePolicy::Kind::rank_order &&
      kind != SchedulePolicy::Kind::preempt) {
    result.shrunk = shrink(job, *result.failure, result.reference_of(result.failure->index),
                           options.shrink_budget);
  }
  return result;
}

}  // namespace ranklab::cli
