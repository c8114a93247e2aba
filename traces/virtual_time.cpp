// The virtual-time simulation (rules in virtual_time.hpp): each rank advances through its
// operations until it must wait for one that has not completed yet; completing an operation
// (when its partner posts, or a collective's last member does) wakes the rank waiting on it.
#include "traces/virtual_time.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <iterator>
#include <map>
#include <set>
#include <utility>

#include "traces/messages.hpp"
#include "traces/trace_builder.hpp"

namespace ranklab {
namespace {

constexpr std::size_t kNone = static_cast<std::size_t>(-1);

/// The k-th collective of a group: who has posted so far.
struct CollectiveSlot {
  std::vector<EventRef> members;
  std::size_t expected = 0;
  double last_post = 0;
  std::uint64_t unit_bytes = 0;
  OpKind op = OpKind::barrier;
  std::uint32_t group = 0;
};

struct RankState {
  std::size_t next = 0;  ///< next event to post
  double clock = 0;
  std::vector<std::size_t> open;  ///< posted, not yet waited for or dropped, ascending
  std::size_t stalled_on = kNone;
  std::size_t computed = kNone;  ///< the event whose compute before it has run
  bool finished = false;
  std::vector<std::pair<double, double>> busy;  ///< compute and transfer intervals
};

class Simulation {
 public:
  Simulation(const Trace& trace, const CostModel& model, const VirtualTimeOptions& options)
      : trace_(trace), model_(model), options_(options), states_(trace.ranks.size()) {
    const std::string_view version = trace.header.version;
    wait_points_ = version != "1.0";
    times_.operations.resize(trace.ranks.size());
    partner_.resize(trace.ranks.size());
    slot_of_.resize(trace.ranks.size());
    std::map<std::pair<std::uint32_t, std::int64_t>, std::size_t> slot_index;
    for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
      const auto& events = trace.ranks[r];
      times_.operations[r].resize(events.size());
      partner_[r].assign(events.size(), EventRef{-1, 0});
      slot_of_[r].assign(events.size(), kNone);
      for (std::size_t i = 0; i < events.size(); ++i) {
        const TraceEvent& e = events[i];
        if (is_point_to_point(e.op)) continue;
        const auto [it, added] = slot_index.emplace(std::pair(e.group, e.coll_seq), slots_.size());
        if (added) {
          slots_.push_back(
              {{}, trace.header.groups[e.group].ranks.size(), 0, e.bytes, e.op, e.group});
        }
        slot_of_[r][i] = it->second;
      }
    }
    rematch_.assign(trace.ranks.size(), false);
    if (options.rematch_any_source) {
      for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
        for (const TraceEvent& e : trace.ranks[r]) {
          if (e.op == OpKind::recv && e.any_source) rematch_[r] = true;
        }
      }
      unmatched_sends_.resize(trace.ranks.size());
      waiting_recvs_.resize(trace.ranks.size());
    }
    for (const MessageLink& link : link_messages(trace).links) {
      if (rematch_[static_cast<std::size_t>(link.recv.rank)]) continue;  // matched as posted
      partner_[static_cast<std::size_t>(link.send.rank)][link.send.index] = link.recv;
      partner_[static_cast<std::size_t>(link.recv.rank)][link.recv.index] = link.send;
    }
  }

  VirtualTimes run() {
    std::deque<int> ready;
    for (std::size_t r = 0; r < states_.size(); ++r) ready.push_back(static_cast<int>(r));
    ready_ = &ready;
    if (options_.rematch_any_source) {
      // One post at a time, the earliest first, so that sends arrive in virtual-time order.
      for (std::size_t r = 0; r < states_.size(); ++r) timed_.emplace(0.0, static_cast<int>(r));
      while (!timed_.empty()) {
        const auto [at, r] = *timed_.begin();
        timed_.erase(timed_.begin());
        advance(r, at);
      }
    }
    while (!ready.empty()) {
      const int r = ready.front();
      ready.pop_front();
      advance(r, 0);
    }
    summarize();
    return std::move(times_);
  }

 private:
  const TraceEvent& event(EventRef ref) const {
    return trace_.ranks[static_cast<std::size_t>(ref.rank)][ref.index];
  }
  OperationTime& time(EventRef ref) {
    return times_.operations[static_cast<std::size_t>(ref.rank)][ref.index];
  }

  /// `ref` completes at `end` after a transfer that began at `start`; wakes its rank.
  void complete(EventRef ref, double start, double end) {
    OperationTime& t = time(ref);
    t.start = start;
    t.end = end;
    RankState& owner = states_[static_cast<std::size_t>(ref.rank)];
    owner.busy.emplace_back(start, end);
    if (owner.stalled_on != ref.index) return;
    if (options_.rematch_any_source) {
      timed_.emplace(std::max(owner.clock, end), ref.rank);
    } else {
      ready_->push_back(ref.rank);
    }
  }

  /// Whether receive `recv` takes a message of send `send` (source, tag, group).
  bool accepts(const TraceEvent& recv, const TraceEvent& send) const {
    return recv.group == send.group && (recv.any_source || recv.peer == send.rank) &&
           (recv.tag == kAnyTagInTrace || recv.tag == send.tag);
  }

  void link(EventRef send, EventRef recv) {
    partner_[static_cast<std::size_t>(send.rank)][send.index] = recv;
    partner_[static_cast<std::size_t>(recv.rank)][recv.index] = send;
    const TraceEvent& r = event(recv);
    if (r.any_source && r.peer != send.rank) ++times_.rematched_receives;
  }

  /// A message to a rank matched as posted: a send takes the first waiting receive that
  /// accepts it, a receive the earliest posted send it accepts.
  void match_as_posted(EventRef ref) {
    const TraceEvent& e = event(ref);
    if (e.op == OpKind::send) {
      auto& waiting = waiting_recvs_[static_cast<std::size_t>(e.peer)];
      for (auto it = waiting.begin(); it != waiting.end(); ++it) {
        if (!accepts(event(*it), e)) continue;
        const EventRef recv = *it;
        waiting.erase(it);
        link(ref, recv);
        try_message(ref, recv);
        return;
      }
      unmatched_sends_[static_cast<std::size_t>(e.peer)].push_back(ref);
      return;
    }
    auto& sends = unmatched_sends_[static_cast<std::size_t>(ref.rank)];
    for (auto it = sends.begin(); it != sends.end(); ++it) {
      if (!accepts(e, event(*it))) continue;
      const EventRef send = *it;
      sends.erase(it);
      link(send, ref);
      try_message(send, ref);
      return;
    }
    waiting_recvs_[static_cast<std::size_t>(ref.rank)].push_back(ref);
  }

  /// A message whose two sides are posted (or, eager, whose send is): complete what can.
  void try_message(EventRef send, EventRef recv) {
    const TraceEvent& s = event(send);
    const OperationTime& ts = time(send);
    const OperationTime& tr = time(recv);
    if (ts.post < 0 || s.status == OpStatus::pending) return;
    if (event(recv).status == OpStatus::pending) return;
    const double transfer = model_.p2p_seconds(s.rank, s.peer, s.bytes);
    if (options_.eager(s.bytes)) {
      if (tr.post < 0 || tr.end >= 0) return;
      complete(recv, ts.post, std::max(tr.post, ts.post + transfer));
      return;
    }
    if (tr.post < 0) return;
    const double start = std::max(ts.post, tr.post);
    complete(send, start, start + transfer);
    complete(recv, start, start + transfer);
  }

  void post(int rank, std::size_t index, double at) {
    const EventRef ref{rank, index};
    const TraceEvent& e = event(ref);
    time(ref).post = at;
    if (e.status == OpStatus::pending) return;  // it never completed when recorded
    if (is_point_to_point(e.op)) {
      const EventRef other = partner_[static_cast<std::size_t>(rank)][index];
      if (e.op == OpKind::send && options_.eager(e.bytes)) complete(ref, at, at);
      const int receiver = e.op == OpKind::send ? e.peer : rank;
      if (receiver >= 0 && static_cast<std::size_t>(receiver) < rematch_.size() &&
          rematch_[static_cast<std::size_t>(receiver)]) {
        match_as_posted(ref);
        return;
      }
      if (other.rank < 0) return;
      if (e.op == OpKind::send) try_message(ref, other);
      if (e.op == OpKind::recv) try_message(other, ref);
      return;
    }
    CollectiveSlot& slot = slots_[slot_of_[static_cast<std::size_t>(rank)][index]];
    slot.members.push_back(ref);
    slot.last_post = std::max(slot.last_post, at);
    if (slot.members.size() < slot.expected) return;
    const double end =
        slot.last_post +
        model_.collective_seconds(slot.op, trace_.header.groups[slot.group].ranks, slot.unit_bytes);
    for (const EventRef& member : slot.members) complete(member, slot.last_post, end);
  }

  /// Waits for open operation `index` of `rank`; false if it has not completed (a stall).
  bool close(RankState& state, int rank, std::size_t index) {
    const double end = times_.operations[static_cast<std::size_t>(rank)][index].end;
    if (end < 0) {
      state.stalled_on = index;
      return false;
    }
    state.clock = std::max(state.clock, end);
    return true;
  }

  /// Closes every open operation for which `keep` is false, in order; false on a stall.
  template <typename Keep, typename WaitPending>
  bool close_open(RankState& state, int rank, Keep keep, WaitPending wait_pending) {
    const auto& events = trace_.ranks[static_cast<std::size_t>(rank)];
    std::vector<std::size_t> still;
    bool stalled = false;
    for (std::size_t index : state.open) {
      if (stalled || keep(index)) {
        still.push_back(index);
        continue;
      }
      const TraceEvent& e = events[index];
      if (e.status == OpStatus::pending && !wait_pending(e)) continue;  // dropped
      if (!close(state, rank, index)) {
        stalled = true;
        still.push_back(index);
      }
    }
    state.open = std::move(still);
    return !stalled;
  }

  /// Runs `work`'s compute events one after the other; `spans` gets each one's interval.
  void compute(int rank, RankState& state, const ComputeWork& work,
               std::vector<std::pair<double, double>>& spans) {
    if (work.empty()) return;
    const double from = state.clock;
    for (const ComputeItem& item : work.as_items()) {
      const double seconds = model_.event_seconds(item, rank);
      spans.emplace_back(state.clock, state.clock + seconds);
      state.clock += seconds;
    }
    if (state.clock > from) state.busy.emplace_back(from, state.clock);
  }

  /// Runs `rank` on until it must wait; with rematch_any_source, until it has posted one
  /// operation, or its clock passed `at` (when it was queued): then it queues again.
  void advance(int rank, double at) {
    RankState& state = states_[static_cast<std::size_t>(rank)];
    if (state.finished) return;
    state.stalled_on = kNone;
    const auto& events = trace_.ranks[static_cast<std::size_t>(rank)];
    const auto never = [](const TraceEvent&) { return false; };
    while (state.next < events.size()) {
      const TraceEvent& e = events[state.next];
      const auto in_flight = [&](std::size_t index) {
        return std::binary_search(e.in_flight.begin(), e.in_flight.end(), events[index].rank_seq);
      };
      if (!close_open(state, rank, in_flight, never)) return;
      if (state.computed != state.next) {
        state.computed = state.next;
        compute(rank, state, e.compute,
                times_.operations[static_cast<std::size_t>(rank)][state.next].compute);
      }
      if (options_.rematch_any_source && state.clock > at) {
        timed_.emplace(state.clock, rank);  // others may post before it
        return;
      }
      state.open.push_back(state.next);
      post(rank, state.next++, state.clock);
      if (options_.rematch_any_source) {
        timed_.emplace(state.clock, rank);
        return;
      }
    }
    // The end: wait for what completed when recorded and for the operation the rank was
    // blocked on (every pending one, without wait points); drop the rest.
    const auto blocked = [&](const TraceEvent& e) { return e.blocked || !wait_points_; };
    const auto completed_first = [&](std::size_t index) {
      return events[index].status == OpStatus::pending;
    };
    if (!close_open(state, rank, completed_first, never)) return;
    if (!close_open(
            state, rank, [](std::size_t) { return false; }, blocked))
      return;
    if (!events.empty()) {
      compute(rank, state, events.back().compute_after,
              times_.operations[static_cast<std::size_t>(rank)].back().compute_after);
    }
    state.finished = true;
  }

  void summarize() {
    for (std::size_t r = 0; r < states_.size(); ++r) {
      RankState& state = states_[r];
      RankTime rank;
      rank.finished = state.finished;
      if (!state.finished) rank.stalled_on = state.stalled_on;
      rank.end = state.clock;
      times_.complete = times_.complete && state.finished;
      auto& busy = state.busy;
      std::sort(busy.begin(), busy.end());
      double covered = 0, reach = 0;
      for (const auto& [from, to] : busy) {
        if (to <= reach) continue;
        covered += to - std::max(from, reach);
        reach = to;
      }
      rank.busy = covered;
      for (const TraceEvent& e : trace_.ranks[r]) {
        const int who = static_cast<int>(r);
        rank.compute +=
            model_.compute_seconds(e.compute, who) + model_.compute_seconds(e.compute_after, who);
        for (const ComputeWork* work : {&e.compute, &e.compute_after}) {
          if (work->empty()) continue;
          times_.has_compute = true;
          for (const ComputeItem& item : work->as_items()) {
            if (model_.event_seconds(item) == 0 && item.flops > 0) times_.unpriced_flops = true;
          }
        }
      }
      rank.comm = std::max(0.0, rank.busy - rank.compute);
      times_.ranks.push_back(rank);
      times_.step_seconds = std::max(times_.step_seconds, rank.end);
    }
    double idle = 0;
    for (RankTime& rank : times_.ranks) {
      rank.idle = std::max(0.0, times_.step_seconds - rank.busy);
      idle += rank.idle;
    }
    if (times_.step_seconds > 0 && !times_.ranks.empty()) {
      times_.bubble = idle / (static_cast<double>(times_.ranks.size()) * times_.step_seconds);
    }
    std::vector<double> ends;
    std::vector<bool> finished;
    for (const RankTime& rank : times_.ranks) {
      ends.push_back(rank.end);
      finished.push_back(rank.finished);
    }
    times_.waits = analyze_waits(trace_, times_.operations, ends, finished, &partner_);
  }

  const Trace& trace_;
  const CostModel& model_;
  VirtualTimeOptions options_;
  bool wait_points_ = true;
  std::vector<RankState> states_;
  std::vector<std::vector<EventRef>> partner_;     ///< the other side of each message
  std::vector<std::vector<std::size_t>> slot_of_;  ///< collective slot of each collective
  std::vector<CollectiveSlot> slots_;
  std::deque<int>* ready_ = nullptr;
  std::set<std::pair<double, int>> timed_;  ///< rematch_any_source: ranks by their clock
  std::vector<bool> rematch_;               ///< ranks whose receives match as posted
  std::vector<std::vector<EventRef>> unmatched_sends_;  ///< per receiver, in post order
  std::vector<std::vector<EventRef>> waiting_recvs_;    ///< per receiver, in post order
  VirtualTimes times_;
};

// Seconds as the trace's integer nanoseconds. A time past the int64 range (2^63 ns, ~292
// years: `--cost alpha=1e10` gets there) saturates at kMaxTraceNs, which the reader accepts,
// instead of wrapping to a negative number it would reject.
std::int64_t trace_ns(double seconds) {
  const double ns = seconds * 1e9;
  if (!(ns < 0x1p63)) return kMaxTraceNs;  // also +inf and NaN
  return std::llround(ns);
}

/// Gives `work`'s compute events their times (an unlabelled amount becomes one event, so
/// that it can carry them); spans are those simulate() found, in as_items() order.
void time_compute(ComputeWork& work, const std::vector<std::pair<double, double>>& spans) {
  if (work.empty() || spans.empty()) return;
  std::vector<ComputeItem> items = work.as_items();
  if (items.size() != spans.size()) return;
  for (std::size_t i = 0; i < items.size(); ++i) {
    items[i].vt_start_ns = trace_ns(spans[i].first);
    items[i].vt_end_ns = trace_ns(spans[i].second);
  }
  work.items = std::move(items);
}

}  // namespace

std::string seconds_text(double s) {
  if (s == 0) return "0";
  // The bounds allow for rounding: 999.9996 us reads "1 ms", not "1e+03 us".
  if (s < 0.9995e-6) return fmt::format("{:.0f} ns", s * 1e9);
  if (s < 0.9995e-3) return fmt::format("{:.3g} us", s * 1e6);
  if (s < 0.99995) return fmt::format("{:.4g} ms", s * 1e3);
  return fmt::format("{:.4g} s", s);
}

bool exceeds_trace_time(const VirtualTimes& times) {
  return !(times.step_seconds * 1e9 < 0x1p63);
}

VirtualTimes simulate(const Trace& trace, const CostModel& model,
                      const VirtualTimeOptions& options) {
  return Simulation(trace, model, options).run();
}

void annotate(Trace& trace, const VirtualTimes& times) {
  for (std::size_t r = 0; r < trace.ranks.size() && r < times.operations.size(); ++r) {
    auto& events = trace.ranks[r];
    for (std::size_t i = 0; i < events.size() && i < times.operations[r].size(); ++i) {
      const OperationTime& t = times.operations[r][i];
      events[i].vt_post_ns = t.post >= 0 ? trace_ns(t.post) : kNoTime;
      events[i].vt_end_ns = t.post >= 0 && t.end >= 0 ? trace_ns(t.end) : kNoTime;
      time_compute(events[i].compute, t.compute);
      time_compute(events[i].compute_after, t.compute_after);
    }
  }
}

void annotate(Trace& trace, const Trace& timed, const VirtualTimes& times) {
  Trace copy = timed;
  annotate(copy, times);
  for (std::size_t r = 0; r < trace.ranks.size() && r < copy.ranks.size(); ++r) {
    const auto& source = copy.ranks[r];
    for (TraceEvent& e : trace.ranks[r]) {
      const auto it =
          std::lower_bound(source.begin(), source.end(), e.rank_seq,
                           [](const TraceEvent& s, std::uint64_t seq) { return s.rank_seq < seq; });
      const bool found = it != source.end() && it->rank_seq == e.rank_seq;
      e.vt_post_ns = found ? it->vt_post_ns : kNoTime;
      e.vt_end_ns = found ? it->vt_end_ns : kNoTime;
      // The replay re-issued the compute (ComputeWork), so it is the same; take its times.
      if (found && it->compute.as_items().size() == e.compute.as_items().size()) {
        e.compute = it->compute;
      }
      if (found && it->compute_after.as_items().size() == e.compute_after.as_items().size()) {
        e.compute_after = it->compute_after;
      }
    }
  }
}

std::string format_virtual_times(const VirtualTimes& times, const CostModel& model,
                                 std::size_t max_ranks) {
  std::string out;
  auto it = std::back_inserter(out);
  // Idle time is named by its cause below: a pipeline bubble only where stages wait on
  // each other, a straggler where a collective waits for its last member.
  fmt::format_to(it, "virtual time ({}): step {}, idle {:.1f}% of {} ranks' time\n",
                 model.describe(), seconds_text(times.step_seconds), times.bubble * 100,
                 times.ranks.size());
  fmt::format_to(it, "{:>6}  {:>12}  {:>12}  {:>12}  {:>12}  {:>12}\n", "rank", "end", "busy",
                 "compute", "comm", "idle");
  for (std::size_t r = 0; r < times.ranks.size() && r < max_ranks; ++r) {
    const RankTime& t = times.ranks[r];
    fmt::format_to(it, "{:>6}  {:>12}  {:>12}  {:>12}  {:>12}  {:>12}{}\n", r, seconds_text(t.end),
                   seconds_text(t.busy), seconds_text(t.compute), seconds_text(t.comm),
                   seconds_text(t.idle),
                   t.finished ? "" : "  (stalled: an operation it waits for never completes)");
  }
  if (times.ranks.size() > max_ranks) {
    fmt::format_to(it, "  ... and {} more ranks (--json lists all)\n",
                   times.ranks.size() - max_ranks);
  }
  out += format_wait_analysis(times.waits);
  if (!times.has_compute && model.prices_compute()) {
    fmt::format_to(it,
                   "note: the trace records no compute, so the cost model's FLOP rate and layer "
                   "time change nothing\n");
  }
  if (!times.has_compute && !model.topology().compute_factor.empty()) {
    fmt::format_to(it,
                   "note: the trace records no compute, so slowing a rank's compute (--slow) "
                   "changes nothing\n");
  }
  if (times.unpriced_flops) {
    fmt::format_to(it,
                   "note: some compute is given in FLOPs only and the cost model has no FLOP "
                   "rate (--cost ...,flops=FLOP_PER_SECOND), so it costs nothing\n");
  }
  if (exceeds_trace_time(times)) {
    fmt::format_to(it,
                   "note: the step ends past 2^63 ns (about 292 years); the trace's vt_post_ns "
                   "and vt_end_ns saturate at {}\n",
                   kMaxTraceNs);
  }
  return out;
}

nlohmann::json virtual_times_to_json(const VirtualTimes& times, const CostModel& model) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const RankTime& t : times.ranks) {
    ranks.push_back({{"finished", t.finished},
                     {"end_s", t.end},
                     {"busy_s", t.busy},
                     {"compute_s", t.compute},
                     {"comm_s", t.comm},
                     {"idle_s", t.idle}});
  }
  nlohmann::json out = {{"cost_model", model.describe()},
                        {"step_s", times.step_seconds},
                        {"bubble", times.bubble},
                        {"complete", times.complete},
                        {"has_compute", times.has_compute},
                        {"trace_ns_saturated", exceeds_trace_time(times)},
                        {"ranks", ranks}};
  out.update(wait_analysis_to_json(times.waits));  // idle by cause, who waited for whom
  return out;
}

}  // namespace ranklab
