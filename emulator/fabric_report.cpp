// What the fabric says when a run ends badly: the wait-for graph and its cycles, the
// culprits, every blocked operation and each rank's last events; and the final report.
#include <algorithm>
#include <new>
#include <set>

#include "comm/errors.hpp"
#include "emulator/fabric.hpp"
#include "emulator/detail/latent_deadlock.hpp"
#include "emulator/detail/wait_graph.hpp"
#include "traces/event_text.hpp"
#include "traces/hash.hpp"

namespace ranklab {

using detail::Operation;

namespace {

constexpr std::size_t kMaxListed = 32;  // keeps reports of 65,536-rank runs readable

std::string join_ranks(const std::vector<int>& ranks) {
  return detail::join_ranks(ranks, {.max_listed = kMaxListed});
}

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

std::string Fabric::describe_pending(const Operation& op) const {
  return describe_operation(op) + describe_site(to_call_site(op.site));
}

std::string Fabric::describe_operation(const Operation& op) const {
  const Group& g = *op.group;
  switch (op.kind) {
    case OpKind::send:
      return fmt::format("send to rank {} tag {} in {} ({} x {}), op #{}", g.global_rank(op.peer),
                         op.tag, g.name(), op.send_data.count, to_string(op.send_data.dtype),
                         op.rank_seq);
    case OpKind::recv:
      return fmt::format("recv from {} tag {} in {} ({} x {}), op #{}",
                         op.peer == kAnySource ? std::string("any source")
                                               : fmt::format("rank {}", g.global_rank(op.peer)),
                         op.tag == kAnyTag ? std::string("any") : std::to_string(op.tag),
                         g.name(), op.recv_data.count, to_string(op.recv_data.dtype),
                         op.rank_seq);
    default:
      return fmt::format("{} #{} in {}: {}, op #{}", to_string(op.kind), op.coll_seq, g.name(),
                         describe(op.signature), op.rank_seq);
  }
}

detail::WaitGraph Fabric::build_wait_graph() const {
  detail::WaitGraph graph;
  graph.waits_for.resize(ranks_.size());
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    const auto& slot = *ranks_[r];
    if (slot.state != RankState::blocked || slot.waiting_on == nullptr) continue;
    const Operation& op = *slot.waiting_on;
    const Group& g = *op.group;
    auto& out = graph.waits_for[r];
    if (op.kind == OpKind::send) {
      out.push_back(g.global_rank(op.peer));
    } else if (op.kind == OpKind::recv) {
      if (op.peer != kAnySource) {
        out.push_back(g.global_rank(op.peer));
      } else {
        for (int m : g.ranks()) {
          if (m != op.rank) out.push_back(m);
        }
      }
    } else {
      const detail::CallSlot* call =
          group_states_[g.id()]->calls.find(op.call_seq);
      for (int i = 0; i < g.size(); ++i) {
        if (call == nullptr || !call->calls[static_cast<std::size_t>(i)]) {
          out.push_back(g.global_rank(i));
        }
      }
    }
  }
  graph.cycles = detail::find_cycles(graph.waits_for, kMaxListed);
  return graph;
}

std::string Fabric::deadlock_summary(const detail::WaitGraph& graph) const {
  int blocked = 0;
  for (const auto& slot : ranks_) blocked += slot->state == RankState::blocked;
  std::string text = fmt::format("deadlock: {} blocked, none can proceed",
                                 plural(static_cast<std::size_t>(blocked), "rank"));
  if (!graph.cycles.empty()) text += "; cycle " + detail::format_cycle(graph.cycles.front());
  return text;
}

ReportedOperation Fabric::report_operation(const Operation& op) const {
  return {.rank = op.rank,
          .op = std::string(to_string(op.kind)),
          .group = op.group->name(),
          .call = describe_operation(op),
          .site = to_call_site(op.site)};
}

Culprit Fabric::naming(Culprit culprit, const std::vector<const Operation*>& ops) const {
  for (const Operation* op : ops) {
    if (op == nullptr) continue;
    culprit.operations.push_back(report_operation(*op));
    const std::string& group = op->group->name();
    if (std::find(culprit.groups.begin(), culprit.groups.end(), group) == culprit.groups.end()) {
      culprit.groups.push_back(group);
    }
  }
  return culprit;
}

void Fabric::list_blocked(FailureAnalysis& analysis) const {
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    const auto& slot = *ranks_[r];
    if (slot.state != RankState::blocked || slot.waiting_on == nullptr) continue;
    if (++analysis.blocked_total <= kMaxListed) {
      analysis.blocked.push_back(report_operation(*slot.waiting_on));
    }
  }
}

FailureAnalysis Fabric::deadlock_analysis(const detail::WaitGraph& graph, int watchdog_rank) const {
  FailureAnalysis out;
  out.deadlock = true;
  out.headline =
      watchdog_rank >= 0
          ? fmt::format("WATCHDOG: rank {} waited longer than {} ms; state of every rank:",
                        watchdog_rank, options_.timeout.count())
          : "DEADLOCK: every live rank is blocked and nothing pending can complete them";
  list_blocked(out);
  out.cycles = graph.cycles;
  out.culprits = culprit_findings(graph);
  // The blocked ranks' last events, and a few of those that ended, in rank order.
  std::size_t ended = 0, failed = 0;
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    const auto state = ranks_[r]->state;
    const bool listed = state == RankState::blocked ? out.last_events.size() < kMaxListed
                        : state == RankState::finished ? ended++ < 4
                        : state == RankState::failed   ? failed++ < 4
                                                       : false;
    if (listed) out.last_events.push_back(recent_events(static_cast<int>(r)));
  }
  return out;
}

std::vector<std::string> Fabric::culprit_findings(const detail::WaitGraph& graph) const {
  std::vector<std::string> out;
  // Ranks that others wait for but that have returned or failed.
  std::map<int, std::vector<int>> waited_by;
  for (std::size_t r = 0; r < graph.waits_for.size(); ++r) {
    for (int target : graph.waits_for[r]) waited_by[target].push_back(static_cast<int>(r));
  }
  for (auto& [target, waiters] : waited_by) {
    const auto state = ranks_[static_cast<std::size_t>(target)]->state;
    if (state == RankState::finished || state == RankState::failed) {
      std::sort(waiters.begin(), waiters.end());
      waiters.erase(std::unique(waiters.begin(), waiters.end()), waiters.end());
      out.push_back(fmt::format("rank {} {} while rank{} {} wait{} for it", target,
                                state == RankState::finished ? "finished (returned)" : "failed",
                                waiters.size() == 1 ? "" : "s", join_ranks(waiters),
                                waiters.size() == 1 ? "s" : ""));
    }
  }
  // Members that never joined a collective the others are blocked in.
  std::set<std::pair<std::uint32_t, std::int64_t>> seen;
  for (const auto& slot : ranks_) {
    const Operation* op = slot->state == RankState::blocked ? slot->waiting_on : nullptr;
    if (op == nullptr || is_point_to_point(op->kind)) continue;
    if (!seen.emplace(op->group->id(), op->coll_seq).second) continue;
    const detail::CallSlot* call =
        group_states_[op->group->id()]->calls.find(op->call_seq);
    for (int i = 0; i < op->group->size(); ++i) {
      if (call != nullptr && call->calls[static_cast<std::size_t>(i)]) continue;
      const int g = op->group->global_rank(i);
      const auto& missing = *ranks_[static_cast<std::size_t>(g)];
      std::string where = missing.state == RankState::finished ? "it finished"
                          : missing.state == RankState::failed ? "it failed"
                          : missing.waiting_on ? "it is blocked in " + describe_pending(*missing.waiting_on)
                                               : "it is running";
      out.push_back(fmt::format("rank {} never joined {} #{} of {} ({})", g, to_string(op->kind),
                                op->coll_seq, op->group->name(), where));
    }
  }
  for (const auto& cycle : graph.cycles) {
    out.push_back(
        fmt::format("cycle {}: each rank waits for the next one", detail::format_cycle(cycle)));
  }
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
    list_blocked(out);  // where the surviving ranks wait, as the failure leaves them
  } catch (const std::bad_alloc&) {  // out of memory: the report goes without the list
    out.blocked.clear();
    out.blocked_total = 0;
  }
  out.last_events.push_back(recent_events(root_rank));
  return out;
}

std::vector<const Operation*> Fabric::pending_operations() const {
  std::vector<const Operation*> out;
  for (const auto& box : mailboxes_) {
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
  for (const Operation* op : pending_operations()) record(*op, OpStatus::pending);
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
    latent_->judge(report, [this](const Operation& op) { return describe_pending(op); });
  }
  return report;
}

}  // namespace ranklab
