// The virtual rendezvous run that finds latent deadlocks (detail/latent_deadlock.hpp says
// what it models and why).
#include "emulator/detail/latent_deadlock.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "traces/rank_list.hpp"

namespace ranklab::detail {
namespace {

/// At most this many distinct findings are listed; the others are counted.
constexpr std::size_t kMaxFindings = 16;

bool is_p2p(OpKind kind) { return kind == OpKind::send || kind == OpKind::recv; }

}  // namespace

LatentDeadlocks::LatentDeadlocks(int world_size)
    : ops_(static_cast<std::size_t>(world_size)),
      steps_(static_cast<std::size_t>(world_size)),
      stopped_(static_cast<std::size_t>(world_size), nullptr),
      seen_(static_cast<std::size_t>(world_size), 0) {}

LatentDeadlocks::Op* LatentDeadlocks::find(int rank, std::uint64_t seq) {
  auto& ops = ops_[static_cast<std::size_t>(rank)];
  const auto it = ops.find(seq);
  return it == ops.end() ? nullptr : &it->second;
}

void LatentDeadlocks::posted(const Operation& operation) {
  Op op;
  op.kind = operation.kind;
  op.rank = operation.rank;
  op.rank_seq = operation.rank_seq;
  op.group = operation.group;
  op.site = operation.site;
  op.peer = operation.peer;
  op.tag = operation.tag;
  if (op.kind == OpKind::send) {
    op.data = {nullptr, operation.send_data.count, operation.send_data.dtype};
  } else if (op.kind == OpKind::recv) {
    op.data = {nullptr, operation.recv_data.count, operation.recv_data.dtype};
  }
  op.signature = operation.signature;
  op.coll_seq = operation.coll_seq;
  ops_[static_cast<std::size_t>(op.rank)].insert_or_assign(op.rank_seq, op);
  steps_[static_cast<std::size_t>(op.rank)].push_back({false, op.rank_seq});
  advance(op.rank);
}

void LatentDeadlocks::matched(const Operation& send, const Operation& recv) {
  Op* s = find(send.rank, send.rank_seq);
  Op* r = find(recv.rank, recv.rank_seq);
  if (s != nullptr) {
    s->partner_rank = recv.rank;
    s->partner_seq = recv.rank_seq;
    s->buffered = send.done.load(std::memory_order_relaxed);
  }
  if (r != nullptr) {
    r->partner_rank = send.rank;
    r->partner_seq = send.rank_seq;
  }
  // A rank stopped at either side may now know whom it waits for, or be free.
  for (const Op* side : {s, r}) {
    if (side != nullptr && stopped_[static_cast<std::size_t>(side->rank)] == side) {
      queue_.push_back(side->rank);
    }
  }
  run_queue();
}

void LatentDeadlocks::waited(const Operation& operation) {
  Op* op = find(operation.rank, operation.rank_seq);
  if (op == nullptr || op->wait_queued) return;  // passed already, or a test seen twice
  op->wait_queued = true;
  steps_[static_cast<std::size_t>(op->rank)].push_back({true, op->rank_seq});
  advance(op->rank);
}

void LatentDeadlocks::advance(int rank) {
  queue_.push_back(rank);
  run_queue();
}

void LatentDeadlocks::run_queue() {
  while (!queue_.empty()) {
    const int rank = queue_.back();
    queue_.pop_back();
    auto& steps = steps_[static_cast<std::size_t>(rank)];
    Op*& stopped = stopped_[static_cast<std::size_t>(rank)];
    stopped = nullptr;
    while (!steps.empty()) {
      const Step step = steps.front();
      Op* op = find(rank, step.seq);
      if (!step.wait) {
        steps.pop_front();
        if (op != nullptr) post(*op);
        continue;
      }
      if (op != nullptr && !can_complete(*op)) {
        stop(rank, *op);
        break;
      }
      steps.pop_front();
      // Passed: nobody needs it any more (a partner finding no record knows it was posted).
      if (op != nullptr) ops_[static_cast<std::size_t>(rank)].erase(step.seq);
    }
  }
}

bool LatentDeadlocks::can_complete(const Op& op) {
  if (op.forced) return true;
  if (is_p2p(op.kind)) {
    if (op.partner_rank == kNoRank) return false;
    const Op* partner = find(op.partner_rank, op.partner_seq);
    return partner == nullptr || partner->posted;
  }
  const auto g = op.group->id();
  return g < collectives_done_.size() && op.coll_seq < collectives_done_[g];
}

void LatentDeadlocks::post(Op& op) {
  op.posted = true;
  if (is_p2p(op.kind)) {
    if (op.waiter != kNoRank) queue_.push_back(op.waiter);
    return;
  }
  const auto g = op.group->id();
  Slot& slot = slots_[{g, op.coll_seq}];
  const auto size = static_cast<std::size_t>(op.group->size());
  if (slot.member_posted.empty()) slot.member_posted.assign(size, 0);
  slot.member_posted[static_cast<std::size_t>(op.group->group_rank(op.rank))] = 1;
  if (++slot.posted < op.group->size()) return;
  // Members post a group's collectives in order, so the k-th is full only after every one
  // before it was.
  if (collectives_done_.size() <= g) collectives_done_.resize(g + 1, 0);
  collectives_done_[g] = std::max(collectives_done_[g], op.coll_seq + 1);
  queue_.insert(queue_.end(), slot.waiters.begin(), slot.waiters.end());
  slots_.erase({g, op.coll_seq});
}

void LatentDeadlocks::stop(int rank, Op& op) {
  stopped_[static_cast<std::size_t>(rank)] = &op;
  if (is_p2p(op.kind)) {
    if (op.partner_rank == kNoRank) return;  // matched() looks again
    if (Op* partner = find(op.partner_rank, op.partner_seq)) partner->waiter = rank;
  } else {
    slots_[{op.group->id(), op.coll_seq}].waiters.push_back(rank);
  }
  const std::vector<int> cycle = cycle_through(rank);
  if (cycle.empty()) return;
  report_cycle(cycle);
  for (const int r : cycle) queue_.push_back(r);
}

std::vector<int> LatentDeadlocks::waits_for(int rank) {
  const Op* op = stopped_[static_cast<std::size_t>(rank)];
  if (op == nullptr) return {};
  if (is_p2p(op->kind)) {
    if (op->partner_rank == kNoRank) return {};
    return {op->partner_rank};
  }
  std::vector<int> out;
  const auto it = slots_.find({op->group->id(), op->coll_seq});
  for (int m = 0; m < op->group->size(); ++m) {
    const bool posted = it != slots_.end() && !it->second.member_posted.empty() &&
                        it->second.member_posted[static_cast<std::size_t>(m)] != 0;
    if (!posted) out.push_back(op->group->global_rank(m));
  }
  return out;
}

std::vector<int> LatentDeadlocks::cycle_through(int rank) {
  // Depth first over stopped ranks, from `rank`, for a path back to it. Iterative: this runs
  // on a rank's fiber stack.
  ++generation_;
  struct Frame {
    int rank;
    std::vector<int> next;
    std::size_t at = 0;
  };
  std::vector<Frame> path;
  path.push_back({rank, waits_for(rank)});
  seen_[static_cast<std::size_t>(rank)] = generation_;
  while (!path.empty()) {
    Frame& top = path.back();
    if (top.at == top.next.size()) {
      path.pop_back();
      continue;
    }
    const int next = top.next[top.at++];
    if (next == rank) {
      std::vector<int> cycle;
      for (const Frame& f : path) cycle.push_back(f.rank);
      return cycle;
    }
    if (seen_[static_cast<std::size_t>(next)] == generation_ ||
        stopped_[static_cast<std::size_t>(next)] == nullptr) {
      continue;
    }
    seen_[static_cast<std::size_t>(next)] = generation_;
    path.push_back({next, waits_for(next)});
  }
  return {};
}

LatentDeadlocks::Op LatentDeadlocks::partner_of(const Op& op) {
  if (is_p2p(op.kind) && op.partner_rank != kNoRank) {
    if (const Op* partner = find(op.partner_rank, op.partner_seq)) return *partner;
  }
  Op none;
  none.rank = kNoRank;
  return none;
}

void LatentDeadlocks::report_cycle(std::vector<int> cycle) {
  ++cycles_;
  // From its smallest rank, whichever rank closed it: the same cycle reads the same way
  // under every schedule, and a loop's repeats share one key.
  std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
  Finding finding;
  bool any_buffered = false;
  for (const int r : cycle) {
    const Op& op = *stopped_[static_cast<std::size_t>(r)];
    any_buffered = any_buffered || op.buffered;
  }
  // Buffering let the buffered sends through: so does the virtual run. A cycle without one
  // is the model's blind spot (a poll it cannot see): let it all through, unreported.
  for (const int r : cycle) {
    Op& op = *stopped_[static_cast<std::size_t>(r)];
    finding.stopped.push_back(op);
    finding.partners.push_back(partner_of(op));
    if (!any_buffered || op.buffered) {
      op.forced = true;
      stopped_[static_cast<std::size_t>(r)] = nullptr;  // free now: no cycle runs through it
    }
  }
  if (any_buffered) record_finding(std::move(finding));
}

void LatentDeadlocks::record_finding(Finding finding) {
  // The same calls on the same ranks (a loop's iterations) are one finding.
  std::string key = finding.lost ? "lost" : "cycle";
  for (const Op& op : finding.stopped) {
    key += fmt::format("|{}:{}:{}:{}", op.rank, op.site.file ? op.site.file : "", op.site.line,
                       static_cast<int>(op.kind));
  }
  if (const auto it = finding_index_.find(key); it != finding_index_.end()) {
    ++findings_[it->second].repeats;
    return;
  }
  if (findings_.size() >= kMaxFindings) return;
  finding_index_.emplace(std::move(key), findings_.size());
  findings_.push_back(std::move(finding));
}

void LatentDeadlocks::judge(RunReport& report,
                            const std::function<std::string(const Operation&)>& describe) {
  // What is still stopped waits for a match that never came: a buffered send nobody
  // received, which under rendezvous blocks for good. Let each through, and look again.
  for (bool freed = true; freed;) {
    freed = false;
    for (std::size_t r = 0; r < stopped_.size(); ++r) {
      Op* op = stopped_[r];
      // A stopped send no receive matched: in an eager run that ended ok, a buffered one.
      if (op == nullptr || op->partner_rank != kNoRank || op->kind != OpKind::send) continue;
      Finding finding;
      finding.lost = true;
      finding.stopped.push_back(*op);
      finding.partners.push_back(partner_of(*op));
      record_finding(std::move(finding));
      ++cycles_;
      op->forced = true;
      advance(static_cast<int>(r));
      freed = true;
    }
  }
  if (findings_.empty()) return;

  const auto call = [&](const Op& op) {
    Operation out;  // what describe reads of it
    out.kind = op.kind;
    out.rank = op.rank;
    out.rank_seq = op.rank_seq;
    out.group = op.group;
    out.site = op.site;
    out.peer = op.peer;
    out.tag = op.tag;
    out.send_data = op.data;
    out.recv_data = {nullptr, op.data.count, op.data.dtype};
    out.signature = op.signature;
    out.coll_seq = op.coll_seq;
    return describe(out);
  };

  std::string details = fmt::format(
      "potential deadlocks: the run finished only because sends were buffered; with "
      "rendezvous sends these calls wait for each other in a cycle, or for a receive that "
      "never comes\n");
  std::vector<int> ranks;
  std::string culprit;
  for (std::size_t i = 0; i < findings_.size(); ++i) {
    const Finding& f = findings_[i];
    const std::string times = f.repeats > 1 ? fmt::format(" ({} times)", f.repeats) : "";
    if (f.lost) {
      const Op& send = f.stopped.front();
      details += fmt::format("\n  lost message{}: rank {}: {}\n    completed only because it was "
                             "buffered: no receive ever took it\n",
                             times, send.rank, call(send));
      if (culprit.empty()) {
        culprit = fmt::format("rank {}'s {} completed only because it was buffered: no receive "
                              "takes it, so under rendezvous sends it never completes",
                              send.rank, call(send));
      }
      if (ranks.empty()) ranks.push_back(send.rank);
      continue;
    }
    std::vector<int> cycle;
    for (const Op& op : f.stopped) cycle.push_back(op.rank);
    cycle.push_back(cycle.front());
    details += fmt::format("\n  cycle {}{}:\n", format_cycle(cycle), times);
    std::vector<std::string> sends;
    for (std::size_t k = 0; k < f.stopped.size(); ++k) {
      const Op& op = f.stopped[k];
      const Op& partner = f.partners[k];
      details += fmt::format("    rank {}: {}\n", op.rank, call(op));
      if (partner.rank == kNoRank) continue;  // a collective: its members are on the cycle
      details += fmt::format("      {}; the {} comes only later:\n        rank {}: {}\n",
                             op.buffered ? "completed only because it was buffered"
                                         : "under rendezvous it waits for its partner",
                             partner.kind == OpKind::recv ? "receive that takes it"
                                                          : "send it takes",
                             partner.rank, call(partner));
      if (op.buffered) {
        sends.push_back(fmt::format("rank {}'s {} (received by rank {}'s {})", op.rank,
                                    call(op), partner.rank, call(partner)));
      }
    }
    if (culprit.empty()) {
      culprit = fmt::format("{} completed only because {} buffered; under rendezvous sends "
                            "the cycle {} deadlocks",
                            fmt::join(sends, " and "), sends.size() == 1 ? "it was" : "they were",
                            format_cycle(cycle));
      ranks.assign(cycle.begin(), cycle.end() - 1);
    }
  }
  if (cycles_ > 0 && findings_.size() == kMaxFindings) {
    details += fmt::format("\n  (only the first {} distinct ones are listed)\n", kMaxFindings);
  }
  report.status = RunStatus::unsafe;
  report.summary = fmt::format(
      "potential deadlock: {} finished only because sends were buffered ({} that "
      "rendezvous sends would deadlock)",
      plural(report.ranks.size(), "rank"), plural(findings_.size(), "pattern"));
  // The details are rendered from the analysis (text and --json alike): the findings first.
  report.analysis = {};
  report.analysis.preamble = std::move(details);
  report.culprit = {CulpritKind::potential_deadlock, std::move(culprit), std::move(ranks)};
  report.render_details();
}

}  // namespace ranklab::detail
