#include "cli/schedule_dry_run.hpp"

#include <chrono>
#include <exception>

#include "collectives/cluster.hpp"

namespace ranklab::cli {
namespace {

// The run's end as the validator reads it: the root cause's own message for a failure.
DryRunOutcome to_outcome(const RunReport& report) {
  DryRunOutcome outcome;
  for (const RankOutcome& rank : report.ranks) {
    outcome.finished.push_back(rank.state == RankOutcome::State::finished);
  }
  if (report.ok()) return outcome;
  outcome.details = report.details;
  if (report.status == RunStatus::deadlock) {
    outcome.end = DryRunOutcome::End::deadlock;
    return outcome;
  }
  outcome.end = DryRunOutcome::End::failed;
  try {
    report.rethrow_if_failed();
    outcome.problem = report.summary;
  } catch (const std::exception& e) {
    outcome.problem = e.what();
  }
  return outcome;
}

}  // namespace

DryRunner emulator_dry_runner() {
  return [](int ranks, const std::function<void(Communicator&)>& stage) {
    ClusterOptions options;
    options.world_size = ranks;
    options.send_mode = SendMode{};  // rendezvous: no reliance on buffering
    options.timeout = std::chrono::milliseconds(30'000);
    Cluster cluster(options);
    return to_outcome(cluster.run(stage));
  };
}

}  // namespace ranklab::cli
