// Who waited for whom (rules in wait_analysis.hpp): each rank's waits from the posts of its
// operations and their partners, its idle stretches from its busy time, each stretch put
// down to the waits covering it, then the sums, the critical path and the slowest rank.
#include "traces/wait_analysis.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <tuple>
#include <utility>

#include "traces/event_text.hpp"
#include "traces/messages.hpp"
#include "traces/stats.hpp"
#include "traces/types.hpp"

namespace ranklab {
namespace {

/// One operation a rank waited on: from its post until `waited_for` posted.
struct Wait {
  double from = 0;
  double to = 0;
  int waited_for = 0;
  std::size_t index = 0;
  IdleCause cause = IdleCause::straggler;
};

/// Idle time put down to a wait (or to a cause without one: index kNoIndex).
struct Attributed {
  double from = 0;
  double to = 0;
  int waited_for = kNoRank;
  std::size_t index = 0;
  IdleCause cause = IdleCause::untraced;
};

using Interval = std::pair<double, double>;

/// Shorter stretches of a critical path are left out: traces hold whole nanoseconds.
constexpr double kShortest = 1e-9;

/// The partner each operation waits for and when it posted, from the trace's structure.
class Partners {
 public:
  Partners(const Trace& trace, const std::vector<std::vector<OperationTime>>& times,
           const std::vector<std::vector<EventRef>>* given)
      : trace_(trace), times_(times) {
    if (given != nullptr) {
      partner_ = *given;
    } else {
      partner_.resize(trace.ranks.size());
      for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
        partner_[r].assign(trace.ranks[r].size(), EventRef{-1, 0});
      }
      for (const MessageLink& link : link_messages(trace).links) {
        partner_[static_cast<std::size_t>(link.send.rank)][link.send.index] = link.recv;
        partner_[static_cast<std::size_t>(link.recv.rank)][link.recv.index] = link.send;
      }
    }
    for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
      for (std::size_t i = 0; i < trace.ranks[r].size(); ++i) {
        const TraceEvent& e = trace.ranks[r][i];
        if (is_point_to_point(e.op)) continue;
        members_[{e.group, e.coll_seq}].push_back({static_cast<int>(r), i});
      }
    }
  }

  /// The wait of operation `index` of `rank`, if it waited on someone and completed.
  std::optional<Wait> wait(int rank, std::size_t index) const {
    const TraceEvent& e = trace_.ranks[static_cast<std::size_t>(rank)][index];
    const OperationTime& t = time({rank, index});
    if (t.post < 0 || t.end < 0) return std::nullopt;
    const auto [last, last_post] = last_poster(rank, index);
    if (last < 0 || !(last_post > t.post)) return std::nullopt;
    const double to = std::min(last_post, t.end);
    if (!(to > t.post)) return std::nullopt;  // an eager send: done when posted
    const bool pipeline =
        is_point_to_point(e.op) && group_kind(group_name(trace_.header, e)) == "pp";
    return Wait{t.post, to, last, index,
                pipeline ? IdleCause::pipeline_bubble : IdleCause::straggler};
  }

  /// When the transfer of a completed operation began: once every side had posted.
  double start(int rank, std::size_t index) const {
    const OperationTime& t = time({rank, index});
    const auto [last, last_post] = last_poster(rank, index);
    const double start = last < 0 ? t.post : std::max(t.post, last_post);
    return std::min(start, t.end);
  }

 private:
  const OperationTime& time(EventRef ref) const {
    return times_[static_cast<std::size_t>(ref.rank)][ref.index];
  }

  /// The other side that posted last (a collective's lowest rank among those that posted
  /// last) and when; rank -1 when there is none, or one never posted.
  std::pair<int, double> last_poster(int rank, std::size_t index) const {
    const TraceEvent& e = trace_.ranks[static_cast<std::size_t>(rank)][index];
    if (is_point_to_point(e.op)) {
      const EventRef other = partner_[static_cast<std::size_t>(rank)][index];
      if (other.rank < 0 || time(other).post < 0) return {-1, 0};
      return {other.rank, time(other).post};
    }
    const auto it = members_.find({e.group, e.coll_seq});
    int last = -1;
    double last_post = 0;
    for (const EventRef& m : it->second) {
      const double post = time(m).post;
      if (post < 0) return {-1, 0};
      if (last < 0 || post > last_post || (post == last_post && m.rank < last)) {
        last = m.rank;
        last_post = post;
      }
    }
    if (it->second.size() < trace_.header.groups[e.group].ranks.size()) return {-1, 0};
    return {last, last_post};
  }

  const Trace& trace_;
  const std::vector<std::vector<OperationTime>>& times_;
  std::vector<std::vector<EventRef>> partner_;
  std::map<std::pair<std::uint32_t, std::int64_t>, std::vector<EventRef>> members_;
};

/// The union of `busy` as sorted disjoint intervals.
std::vector<Interval> merged(std::vector<Interval> busy) {
  std::sort(busy.begin(), busy.end());
  std::vector<Interval> out;
  for (const Interval& b : busy) {
    if (!(b.second > b.first)) continue;
    if (!out.empty() && b.first <= out.back().second) {
      out.back().second = std::max(out.back().second, b.second);
    } else {
      out.push_back(b);
    }
  }
  return out;
}

/// Puts idle stretch [from, to) down to `waits`, latest first; the rest to `rest`.
void attribute(double from, double to, const std::vector<Wait>& waits, IdleCause rest,
               std::vector<Attributed>& out) {
  std::vector<const Wait*> covering;
  for (const Wait& w : waits) {
    if (w.to > from && w.from < to) covering.push_back(&w);
  }
  std::sort(covering.begin(), covering.end(), [](const Wait* a, const Wait* b) {
    return std::tie(b->to, a->index) < std::tie(a->to, b->index);
  });
  double cursor = to;
  std::vector<Attributed> found;
  for (const Wait* w : covering) {
    const double hi = std::min(w->to, cursor);
    const double lo = std::max(w->from, from);
    if (!(hi > lo)) continue;
    if (hi < cursor) found.push_back({hi, cursor, kNoRank, 0, rest});
    found.push_back({lo, hi, w->waited_for, w->index, w->cause});
    cursor = lo;
  }
  if (cursor > from) found.push_back({from, cursor, kNoRank, 0, rest});
  out.insert(out.end(), found.rbegin(), found.rend());
}

const char* cause_key(IdleCause cause) {
  switch (cause) {
    case IdleCause::pipeline_bubble:
      return "pipeline_bubble";
    case IdleCause::straggler:
      return "straggler";
    case IdleCause::finished_early:
      return "finished_early";
    case IdleCause::stalled:
      return "stalled";
    case IdleCause::untraced:
      return "untraced";
  }
  return "untraced";
}

double share(double seconds, const WaitAnalysis& a) {
  const double all = a.step_seconds * static_cast<double>(a.idle.size());
  return all > 0 ? seconds / all : 0.0;
}

}  // namespace

std::string describe_operation(const TraceEvent& e, const TraceHeader& header) {
  const std::string& group = group_name(header, e);
  if (!is_point_to_point(e.op)) {
    return fmt::format("{} #{} of {} (op #{})", to_string(e.op), e.coll_seq, group, e.rank_seq);
  }
  if (e.op == OpKind::recv && e.any_source) {
    return fmt::format("recv from any rank in {} (op #{})", group, e.rank_seq);
  }
  return fmt::format("{} {} rank {} in {} (op #{})", to_string(e.op),
                     e.op == OpKind::send ? "to" : "from", e.peer, group, e.rank_seq);
}

std::string describe_idle_cause(IdleCause cause, int rank) {
  switch (cause) {
    case IdleCause::pipeline_bubble:
      return "pipeline bubble";
    case IdleCause::straggler:
      return fmt::format("waiting for straggler rank {}", rank);
    case IdleCause::finished_early:
      return "finished early";
    case IdleCause::stalled:
      return "stalled (waiting on what never completes)";
    case IdleCause::untraced:
      return "between operations (not in the trace)";
  }
  return "";
}

double WaitAnalysis::idle_share() const { return share(idle_seconds, *this); }

double WaitAnalysis::pipeline_bubble_share() const {
  double bubble = 0;
  for (const IdleShare& c : causes) {
    if (c.cause == IdleCause::pipeline_bubble) bubble += c.seconds;
  }
  return share(bubble, *this);
}

WaitAnalysis analyze_waits(const Trace& trace, const std::vector<std::vector<OperationTime>>& times,
                           const std::vector<double>& rank_end, const std::vector<bool>& finished,
                           const std::vector<std::vector<EventRef>>* partners_given) {
  WaitAnalysis a;
  const std::size_t n = trace.ranks.size();
  for (double end : rank_end) a.step_seconds = std::max(a.step_seconds, end);
  a.idle.assign(n, 0.0);
  const Partners partners(trace, times, partners_given);
  std::vector<std::vector<Attributed>> attributed(n);
  for (std::size_t r = 0; r < n; ++r) {
    const int rank = static_cast<int>(r);
    std::vector<Wait> waits;
    std::vector<Interval> busy;
    bool pipeline_stage = false;  // exchanges with other stages: its idle tail is the drain
    for (std::size_t i = 0; i < trace.ranks[r].size() && i < times[r].size(); ++i) {
      const OperationTime& t = times[r][i];
      const TraceEvent& e = trace.ranks[r][i];
      pipeline_stage = pipeline_stage ||
                       (is_point_to_point(e.op) && group_kind(group_name(trace.header, e)) == "pp");
      for (const auto* spans : {&t.compute, &t.compute_after}) {
        busy.insert(busy.end(), spans->begin(), spans->end());
      }
      if (t.post < 0 || t.end < 0) continue;
      busy.emplace_back(t.start >= 0 ? t.start : partners.start(rank, i), t.end);
      if (const auto w = partners.wait(rank, i)) waits.push_back(*w);
    }
    const double end = r < rank_end.size() ? rank_end[r] : 0.0;
    double cursor = 0;
    for (const Interval& b : merged(std::move(busy))) {
      if (b.first >= end) break;
      if (b.first > cursor) attribute(cursor, b.first, waits, IdleCause::untraced, attributed[r]);
      cursor = std::max(cursor, b.second);
    }
    if (end > cursor) attribute(cursor, end, waits, IdleCause::untraced, attributed[r]);
    const bool done = r < finished.size() && finished[r];
    if (a.step_seconds > std::max(end, cursor)) {
      attributed[r].push_back({std::max(end, cursor), a.step_seconds, kNoRank, 0,
                               !done            ? IdleCause::stalled
                               : pipeline_stage ? IdleCause::pipeline_bubble
                                                : IdleCause::finished_early});
    }
  }
  // Sums: by cause, by pair.
  std::map<std::pair<IdleCause, int>, double> by_cause;
  std::map<std::pair<int, int>, WaitPair> by_pair;
  std::map<int, double> waited_for;
  for (std::size_t r = 0; r < n; ++r) {
    for (const Attributed& s : attributed[r]) {
      const double seconds = s.to - s.from;
      a.idle[r] += seconds;
      by_cause[{s.cause, s.cause == IdleCause::straggler ? s.waited_for : kNoRank}] += seconds;
      if (s.waited_for < 0) continue;
      waited_for[s.waited_for] += seconds;
      WaitPair& p = by_pair[{static_cast<int>(r), s.waited_for}];
      p.waiter = static_cast<int>(r);
      p.waited_for = s.waited_for;
      p.seconds += seconds;
      ++p.waits;
      if (seconds > p.longest) {
        const TraceEvent& e = trace.ranks[r][s.index];
        p.longest = seconds;
        p.longest_rank_seq = e.rank_seq;
        p.longest_op = describe_operation(e, trace.header);
        p.cause = s.cause;
      }
    }
  }
  for (double idle : a.idle) a.idle_seconds += idle;
  for (const auto& [key, seconds] : by_cause) a.causes.push_back({key.first, key.second, seconds});
  std::stable_sort(a.causes.begin(), a.causes.end(),
                   [](const IdleShare& x, const IdleShare& y) { return x.seconds > y.seconds; });
  for (const auto& [key, pair] : by_pair) a.pairs.push_back(pair);
  std::stable_sort(a.pairs.begin(), a.pairs.end(),
                   [](const WaitPair& x, const WaitPair& y) { return x.seconds > y.seconds; });
  for (const auto& [rank, seconds] : waited_for) {
    if (seconds > a.slowest_waited) {
      a.slowest_rank = rank;
      a.slowest_waited = seconds;
    }
  }
  // The critical path, back from the rank that ends last.
  int rank = kNoRank;
  for (std::size_t r = 0; r < rank_end.size(); ++r) {
    if (rank < 0 || rank_end[r] > rank_end[static_cast<std::size_t>(rank)])
      rank = static_cast<int>(r);
  }
  std::vector<std::vector<bool>> used(n);
  for (std::size_t r = 0; r < n; ++r) used[r].assign(attributed[r].size(), false);
  double t = rank >= 0 ? rank_end[static_cast<std::size_t>(rank)] : 0.0;
  std::vector<PathSegment> back;
  while (rank >= 0) {
    const auto& mine = attributed[static_cast<std::size_t>(rank)];
    std::size_t best = mine.size();
    for (std::size_t k = 0; k < mine.size(); ++k) {
      if (used[static_cast<std::size_t>(rank)][k] || mine[k].waited_for < 0 || mine[k].to > t)
        continue;
      if (best == mine.size() || mine[k].to > mine[best].to) best = k;
    }
    if (best == mine.size()) {
      back.push_back({rank, 0, t});
      break;
    }
    used[static_cast<std::size_t>(rank)][best] = true;
    if (t > mine[best].to) back.push_back({rank, mine[best].to, t});
    t = mine[best].to;
    rank = mine[best].waited_for;
  }
  for (auto it = back.rbegin(); it != back.rend(); ++it) {
    // Under a nanosecond (a transfer on a nearly free link, rounding): nothing to show.
    if (!(it->to - it->from >= kShortest)) continue;
    if (!a.critical_path.empty() && a.critical_path.back().rank == it->rank) {
      a.critical_path.back().to = it->to;
    } else {
      a.critical_path.push_back(*it);
    }
  }
  return a;
}

std::optional<RecordedTimes> recorded_times(const Trace& trace) {
  RecordedTimes out;
  out.operations.resize(trace.ranks.size());
  bool any = false;
  const auto seconds = [](std::int64_t ns) {
    return ns == kNoTime ? -1.0 : static_cast<double>(ns) * 1e-9;
  };
  for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
    double end = 0;
    bool finished = true;
    for (const TraceEvent& e : trace.ranks[r]) {
      OperationTime t;
      t.post = seconds(e.vt_post_ns);
      t.end = e.status == OpStatus::pending ? -1.0 : seconds(e.vt_end_ns);
      if (e.status != OpStatus::pending && (t.post < 0 || t.end < 0)) return std::nullopt;
      if (e.status == OpStatus::pending) finished = false;
      any = any || t.post >= 0;  // a trace of pending operations alone may be untimed
      for (const auto& [work, spans] :
           {std::pair(&e.compute, &t.compute), std::pair(&e.compute_after, &t.compute_after)}) {
        for (const ComputeItem& item : work->as_items()) {
          if (item.vt_start_ns == kNoTime || item.vt_end_ns == kNoTime) continue;
          spans->emplace_back(seconds(item.vt_start_ns), seconds(item.vt_end_ns));
          end = std::max(end, spans->back().second);
        }
      }
      end = std::max({end, t.post, t.end});
      out.operations[r].push_back(std::move(t));
    }
    out.rank_end.push_back(end);
    out.finished.push_back(finished);
  }
  if (!any) return std::nullopt;
  return out;
}

std::optional<WaitAnalysis> analyze_recorded_waits(const Trace& trace) {
  const std::optional<RecordedTimes> times = recorded_times(trace);
  if (!times) return std::nullopt;
  return analyze_waits(trace, times->operations, times->rank_end, times->finished);
}

std::string format_wait_analysis(const WaitAnalysis& a, std::size_t max_pairs) {
  std::string out;
  auto it = std::back_inserter(out);
  if (a.idle_seconds > 0) {
    fmt::format_to(it, "idle by cause:");
    const char* sep = " ";
    for (const IdleShare& c : a.causes) {
      fmt::format_to(it, "{}{} {} ({:.1f}%)", sep, describe_idle_cause(c.cause, c.rank),
                     seconds_text(c.seconds), share(c.seconds, a) * 100);
      sep = ", ";
    }
    fmt::format_to(it, "\n");
  }
  if (a.pairs.empty()) {
    fmt::format_to(it, "who waited for whom: no rank waited for another\n");
  } else {
    fmt::format_to(it, "who waited for whom (idle time, the longest first):\n");
    for (std::size_t k = 0; k < a.pairs.size() && k < max_pairs; ++k) {
      const WaitPair& p = a.pairs[k];
      const char* bubble = p.cause == IdleCause::pipeline_bubble ? ", pipeline bubble" : "";
      if (p.waits == 1) {
        fmt::format_to(it, "  rank {} waited {} for rank {} in {}{}\n", p.waiter,
                       seconds_text(p.seconds), p.waited_for, p.longest_op, bubble);
      } else {
        fmt::format_to(it, "  rank {} waited {} for rank {}: {} waits, the longest {} in {}{}\n",
                       p.waiter, seconds_text(p.seconds), p.waited_for, p.waits,
                       seconds_text(p.longest), p.longest_op, bubble);
      }
    }
    if (a.pairs.size() > max_pairs) {
      fmt::format_to(it, "  ... and {} more pairs (--json lists all)\n",
                     a.pairs.size() - max_pairs);
    }
  }
  if (!a.critical_path.empty()) {
    fmt::format_to(it, "critical path (what the step's end waited on, in time order):");
    const char* sep = " ";
    constexpr std::size_t kShown = 12;
    const std::size_t n = a.critical_path.size();
    for (std::size_t k = 0; k < n; ++k) {
      if (n > kShown && k == kShown / 2) {
        fmt::format_to(it, "{}... {} more ...", sep, n - kShown);
        k = n - kShown / 2 - 1;
        continue;
      }
      const PathSegment& s = a.critical_path[k];
      fmt::format_to(it, "{}rank {} ({} to {})", sep, s.rank, seconds_text(s.from),
                     seconds_text(s.to));
      sep = ", ";
    }
    fmt::format_to(it, "\n");
  }
  if (a.slowest_rank >= 0) {
    fmt::format_to(it, "slowest rank: {} (the others waited {} for it in all)\n", a.slowest_rank,
                   seconds_text(a.slowest_waited));
  }
  return out;
}

nlohmann::json wait_analysis_to_json(const WaitAnalysis& a) {
  nlohmann::json causes = nlohmann::json::array();
  for (const IdleShare& c : a.causes) {
    causes.push_back({{"cause", cause_key(c.cause)},
                      {"rank", c.rank >= 0 ? nlohmann::json(c.rank) : nlohmann::json(nullptr)},
                      {"text", describe_idle_cause(c.cause, c.rank)},
                      {"seconds", c.seconds},
                      {"share", share(c.seconds, a)}});
  }
  nlohmann::json pairs = nlohmann::json::array();
  for (const WaitPair& p : a.pairs) {
    pairs.push_back({{"waiter", p.waiter},
                     {"waited_for", p.waited_for},
                     {"seconds", p.seconds},
                     {"waits", p.waits},
                     {"longest_s", p.longest},
                     {"longest_rank_seq", p.longest_rank_seq},
                     {"longest_op", p.longest_op},
                     {"longest_cause", cause_key(p.cause)}});
  }
  nlohmann::json path = nlohmann::json::array();
  for (const PathSegment& s : a.critical_path) {
    path.push_back({{"rank", s.rank}, {"from_s", s.from}, {"to_s", s.to}});
  }
  return {{"idle_share", a.idle_share()},
          {"pipeline_bubble", a.pipeline_bubble_share()},
          {"idle_causes", causes},
          {"waits", pairs},
          {"critical_path", path},
          {"slowest_rank",
           a.slowest_rank >= 0 ? nlohmann::json(a.slowest_rank) : nlohmann::json(nullptr)},
          {"slowest_waited_s", a.slowest_waited}};
}

namespace {

/// What clock a timed trace's times come from, for the section's header.
std::string clock_text(const Trace& trace) {
  const nlohmann::json& time = trace.header.config.value("time", nlohmann::json());
  if (time.is_object() && !time.value("one_clock", true)) {
    return "the dumps' host clocks, which may disagree: a wait shorter than their disagreement "
           "means nothing";
  }
  return "the trace's own times";
}

}  // namespace

std::string format_recorded_timing(const Trace& trace) {
  const std::optional<WaitAnalysis> a = analyze_recorded_waits(trace);
  if (!a) return "";
  return fmt::format("timing ({}): step {}, idle {:.1f}% of {} ranks' time\n", clock_text(trace),
                     seconds_text(a->step_seconds), a->idle_share() * 100, a->idle.size()) +
         format_wait_analysis(*a);
}

nlohmann::json recorded_timing_to_json(const Trace& trace) {
  const std::optional<WaitAnalysis> a = analyze_recorded_waits(trace);
  if (!a) return nullptr;
  nlohmann::json out = wait_analysis_to_json(*a);
  out["clock"] = clock_text(trace);
  out["step_s"] = a->step_seconds;
  out["idle_s"] = a->idle;
  return out;
}

}  // namespace ranklab
