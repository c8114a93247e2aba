// What the fabric adds to its post-mortem (emulator/diagnosis/, which reads the snapshot):
// the timeout, the failed rank's error and each rank's last events; and the final report.
#include <algorithm>
#include <new>

#include "comm/errors.hpp"
#include "emulator/fabric.hpp"
#include "emulator/detail/latent_deadlock.hpp"
#include "emulator/detail/pending_op.hpp"
#include "emulator/diagnosis/analysis.hpp"
#include "emulator/diagnosis/describe.hpp"
#include "traces/event_text.hpp"
#include "traces/hash.hpp"

namespace ranklab {

using detail::Operation;

namespace {

std::string describe_event(const TraceEvent& e, const std::vector<std::unique_ptr<Group>>& groups) {
  std::string text = fmt::format("#{} {}", e.rank_seq, to_string(e.op));
  if (is_point_to_point(e.op)) {
    text += fmt::format(" {} rank {} tag {}", e.op == OpKind::send ? "to" : "from", e.peer, e.tag);
  } else {
    text += fmt::format(" #{}", e.coll_seq);
  }
  text += fmt::format(" in {} ({} x {})", groups[e.group]->name(), e.count, to_string(e.dtype));
  if (e.status == OpStatus::pending) text += " [pending]";
  return text + describe_site(e.site);
}

}  // namespace

std::string detail::describe_exception(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an exception not derived from std::exception";
  }
}

FailureAnalysis Fabric::deadlock_analysis(const diagnosis::FabricSnapshot& snapshot,
                                          const detail::WaitGraph& graph,
                                          int watchdog_rank) const {
  FailureAnalysis out = diagnosis::deadlock_analysis(
      snapshot, graph,
      watchdog_rank >= 0
          ? fmt::format("WATCHDOG: rank {} waited longer than {} ms; state of every rank:",
                        watchdog_rank, options_.timeout.count())
          : "DEADLOCK: every live rank is blocked and nothing pending can complete them");
  for (const int r : diagnosis::last_events_of(snapshot)) out.last_events.push_back(recent_events(r));
  return out;
}

RankEvents Fabric::recent_events(int rank) const {
  RankEvents out{.rank = rank};
  for (const auto& e : recent_of(rank)) {
    out.events.push_back(describe_event(e, groups_));
  }
  return out;
}

FailureAnalysis Fabric::failure_analysis(int root_rank) const {
  FailureAnalysis out;
  out.headline = fmt::format("RANK FAILURE: rank {} failed first (root cause): {}", root_rank,
                             without_rank_prefix(root_rank,
                                                 ranks_[static_cast<std::size_t>(root_rank)]->error));
  try {
    diagnosis::list_blocked(snapshot(), out);  // where the surviving ranks wait, as it leaves them
  } catch (const std::bad_alloc&) {  // out of memory: the report goes without the list
    out.blocked.clear();
    out.blocked_total = 0;
    out.blocked_calls.clear();
  }
  out.last_events.push_back(recent_events(root_rank));
  return out;
}

std::vector<const Operation*> Fabric::pending_operations() const {
  std::vector<const Operation*> out;
  for (const auto& slot : ranks_) {
    const Mailbox& box = slot->mailbox;
    for (const auto& op : box.unexpected) {
      if (!op->done.load(std::memory_order_relaxed)) out.push_back(op.get());
    }
    for (const auto& op : box.receives) out.push_back(op.get());
  }
  for (const auto& state : group_states_) {
    for (const auto& slot : state->calls.slots()) {
      for (const Operation* m : slot.ops) {
        if (m != nullptr) out.push_back(m);
      }
    }
  }
  return out;
}

TraceHeader Fabric::trace_header() const {
  TraceHeader header;
  header.world_size = world_size();
  for (const auto& g : groups_) {
    header.groups.push_back(TraceGroup{g->name(), std::vector<int>(g->ranks().begin(), g->ranks().end())});
  }
  header.config = options_.trace_config;
  header.config["policy"] = options_.policy.to_string();
  header.config["send_mode"] = options_.send_mode.to_string();
  header.config["threads"] = options_.threads;
  return header;
}

RunReport Fabric::finish() {
  // Every rank has ended and every worker thread has been joined: nothing runs
  // concurrently, and this thread may have no fiber scheduler to take the lock with.
  if (verdict_ == RunStatus::ok && failure_pending_) declare_failure();  // deferred for memory
  for (const Operation* op : pending_operations()) {
    record(*op, OpStatus::pending, ComputeWork(op->compute));
  }
  if (options_.trace_sink) options_.trace_sink->finish(trace_header());

  RunReport report;
  report.status = verdict_;
  report.root_cause_rank = root_rank_;
  report.root_cause = root_cause_;
  report.summary = verdict_ == RunStatus::ok
                       ? fmt::format("ok: {} finished", plural(world_size(), "rank"))
                       : summary_;
  report.analysis = analysis_;
  report.culprit = culprit_;
  report.render_details();
  report.wait_graph = wait_graph_;
  if (faults_) {
    std::vector<std::uint64_t> posted;
    for (const auto& slot : ranks_) posted.push_back(slot->next_seq);
    report.faults = faults_->notes(posted);
  }
  report.ranks.resize(ranks_.size());
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    const auto& slot = *ranks_[r];
    auto& outcome = report.ranks[r];
    outcome.error = slot.error;
    if (slot.state != RankState::failed) {
      outcome.state = RankOutcome::State::finished;
    } else if (static_cast<int>(r) == root_rank_) {
      outcome.state = RankOutcome::State::failed;
    } else if (verdict_ == RunStatus::deadlock) {
      outcome.state = RankOutcome::State::deadlocked;
    } else {
      outcome.state = RankOutcome::State::aborted;
    }
  }
  if (latent_ && report.status == RunStatus::ok) {
    latent_->judge(report, [](const Operation& op) {
      return diagnosis::describe_pending(detail::pending_op(op));
    });
  }
  return report;
}

}  // namespace ranklab
