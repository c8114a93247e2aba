// What the fabric says when a run ends badly: the wait-for graph and its cycles, the
// culprits, every blocked operation and each rank's last events; and the final report.
#include <algorithm>
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
  std::string out;
  for (std::size_t i = 0; i < ranks.size() && i < kMaxListed; ++i) {
    out += i ? ", " : "";
    out += std::to_string(ranks[i]);
  }
  if (ranks.size() > kMaxListed) out += fmt::format(" and {} more", ranks.size() - kMaxListed);
  return out;
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
  std::string text = fmt::format("deadlock: {} rank{} blocked, none can proceed", blocked,
                                 blocked == 1 ? "" : "s");
  if (!graph.cycles.empty()) text += "; cycle " + detail::format_cycle(graph.cycles.front());
  return text;
}

std::string Fabric::deadlock_details(const detail::WaitGraph& graph, int watchdog_rank) const {
  std::string out;
  if (watchdog_rank >= 0) {
    out += fmt::format("WATCHDOG: rank {} waited longer than {} ms; state of every rank:\n",
                       watchdog_rank, options_.timeout.count());
  } else {
    out += "DEADLOCK: every live rank is blocked and nothing pending can complete them\n";
  }
  std::vector<int> blocked, finished, failed;
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    const auto state = ranks_[r]->state;
    if (state == RankState::blocked) blocked.push_back(static_cast<int>(r));
    if (state == RankState::finished) finished.push_back(static_cast<int>(r));
    if (state == RankState::failed) failed.push_back(static_cast<int>(r));
  }
  out += "\nblocked operations:\n";
  for (std::size_t i = 0; i < blocked.size() && i < kMaxListed; ++i) {
    const int r = blocked[i];
    out += fmt::format("  rank {}: {}\n", r, describe_pending(*ranks_[static_cast<std::size_t>(r)]->waiting_on));
  }
  if (blocked.size() > kMaxListed) out += fmt::format("  ... and {} more\n", blocked.size() - kMaxListed);

  out += "\nwait-for cycles:\n";
  if (graph.cycles.empty()) out += "  (none: the ranks wait for ranks that can no longer act)\n";
  for (const auto& cycle : graph.cycles) out += "  " + detail::format_cycle(cycle) + "\n";

  out += "\nculprits:\n" + culprit_lines(graph);
  out += "\nlast events:\n";
  for (std::size_t i = 0; i < blocked.size() && i < kMaxListed; ++i) out += recent_events(blocked[i]);
  for (std::size_t i = 0; i < finished.size() && i < 4; ++i) out += recent_events(finished[i]);
  for (std::size_t i = 0; i < failed.size() && i < 4; ++i) out += recent_events(failed[i]);
  return out;
}

std::string Fabric::culprit_lines(const detail::WaitGraph& graph) const {
  std::string out;
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
      out += fmt::format("  rank {} {} while rank{} {} wait{} for it\n", target,
                         state == RankState::finished ? "finished (returned)" : "failed",
                         waiters.size() == 1 ? "" : "s", join_ranks(waiters),
                         waiters.size() == 1 ? "s" : "");
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
      out += fmt::format("  rank {} never joined {} #{} of {} ({})\n", g, to_string(op->kind),
                         op->coll_seq, op->group->name(), where);
    }
  }
  for (const auto& cycle : graph.cycles) {
    out += fmt::format("  cycle {}: each rank waits for the next one\n", detail::format_cycle(cycle));
  }
  return out.empty() ? "  (none identified)\n" : out;
}

std::string Fabric::recent_events(int rank) const {
  const auto events = ranks_[static_cast<std::size_t>(rank)]->recent.snapshot();
  std::string out = fmt::format("  rank {}:", rank);
  if (events.empty()) return out + " (no operations completed)\n";
  out += "\n";
  for (const auto& e : events) out += "    " + describe_event(e, groups_) + "\n";
  return out;
}

std::string Fabric::failure_details(int root_rank) const {
  return fmt::format("RANK FAILURE: rank {} failed first (root cause): {}\n",
                     root_rank, ranks_[static_cast<std::size_t>(root_rank)]->error) +
         "\nlast events:\n" + recent_events(root_rank);
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
  report.summary = verdict_ == RunStatus::ok ? fmt::format("ok: {} ranks finished", world_size())
                                             : summary_;
  report.details = details_;
  report.culprit = culprit_;
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
