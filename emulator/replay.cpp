// Replay: the plan (validated buffers and groups), each rank's driver, and the run.
// replay.hpp describes what is re-issued and checked; the report's text is replay_report.cpp.
#include "emulator/replay.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <boost/fiber/mutex.hpp>
#include <iterator>
#include <limits>
#include <memory>
#include <mutex>
#include <set>
#include <utility>

#include "emulator/engine.hpp"
#include "emulator/detail/replay_checker.hpp"
#include "comm/errors.hpp"
#include "emulator/rank.hpp"
#include "traces/event_text.hpp"
#include "traces/hash.hpp"
#include "traces/progress.hpp"
#include "traces/quote_input.hpp"
#include "traces/stats.hpp"

namespace ranklab {
namespace {

/// Elements one operation reads (`input`) and writes (`output`), from FORMAT.md's per-rank
/// unit: one unit, or one per member of the group of `n` where the operation gathers or
/// scatters (at the root only, for gather and scatter).
struct BufferCounts {
  std::uint64_t input = 0;
  std::uint64_t output = 0;
};

BufferCounts buffer_counts(OpKind op, std::uint64_t unit, std::uint64_t n, bool root) {
  switch (op) {
    case OpKind::send: return {unit, 0};
    case OpKind::recv: return {0, unit};
    case OpKind::barrier: return {0, 0};
    case OpKind::all_reduce:
    case OpKind::broadcast:
    case OpKind::reduce: return {unit, unit};
    case OpKind::all_gather: return {unit, unit * n};
    case OpKind::gather: return {unit, root ? unit * n : 0};
    case OpKind::reduce_scatter: return {unit * n, unit};
    case OpKind::scatter: return {root ? unit * n : 0, unit};
    case OpKind::all_to_all: return {unit * n, unit * n};
  }
  return {};
}

/// Refuses `e`, naming where the trace has it ("t.jsonl:5: rank 0 op #3 (send): ...").
[[noreturn]] void unreplayable(const Trace& trace, const TraceEvent& e, std::string_view why) {
  const std::string where = source_of(trace, e);
  throw TraceError(fmt::format("{}{}rank {} op #{} ({}): cannot replay: {}", where,
                               where.empty() ? "" : ": ", e.rank, e.rank_seq, to_string(e.op),
                               why));
}

/// The bytes of buffer_counts, refused above `limit` (a hand-made trace may claim 2^48).
BufferCounts buffer_bytes(const Trace& trace, const TraceEvent& e, std::uint64_t limit) {
  const auto n = static_cast<std::uint64_t>(trace.header.groups[e.group].ranks.size());
  if (e.bytes > limit || (n > 0 && e.bytes > limit / n)) {
    unreplayable(trace, e, fmt::format("its buffers exceed the replay limit of {} bytes", limit));
  }
  return buffer_counts(e.op, e.bytes, n, e.root == e.rank);
}

/// The trace's groups, created on the replayed fabric in header order so that replayed
/// group ids are the header's indices. Whoever needs group g first creates 1..g.
class GroupTable {
 public:
  explicit GroupTable(const Trace& trace)
      : header_(trace.header), groups_(trace.header.groups.size()) {
    std::set<std::string> names;
    for (std::size_t g = 1; g < header_.groups.size(); ++g) {
      const std::string& name = header_.groups[g].name;
      if (!names.insert(Group::make_name(kind(g), header_.groups[g].ranks)).second) {
        const std::string where = header_source(trace);
        throw TraceError(fmt::format(
            "{}{}group {} cannot be re-created apart from an earlier group with the same kind "
            "and ranks",
            where, where.empty() ? "" : ": ", quote_input(name)));
      }
    }
  }

  const Group& get(RankContext& context, std::uint32_t g) {
    if (g < created_.load(std::memory_order_acquire)) return *groups_[g];
    std::lock_guard lock(mutex_);
    for (std::size_t next = created_.load(std::memory_order_relaxed); next <= g; ++next) {
      groups_[next] =
          next == 0 ? &context.world() : &context.new_group(kind(next), header_.groups[next].ranks);
      created_.store(next + 1, std::memory_order_release);
    }
    return *groups_[g];
  }

 private:
  /// `tp[0,1]` -> `tp`, as the fabric names groups `KIND[ranks]`.
  std::string_view kind(std::size_t g) const { return group_kind(header_.groups[g].name); }

  const TraceHeader& header_;
  boost::fibers::mutex mutex_;  // creating a group may suspend the fiber: no std::mutex here
  std::vector<const Group*> groups_;
  std::atomic<std::size_t> created_{0};
};

/// The largest buffer of one kind and the operation that needs it.
struct LargestBuffer {
  std::uint64_t bytes = 0;
  const TraceEvent* needed_by = nullptr;

  void offer(std::uint64_t candidate, const TraceEvent& e) {
    if (candidate > bytes) *this = {candidate, &e};
  }
  void offer(const LargestBuffer& other) {
    if (other.bytes > bytes) *this = other;
  }
};

/// Everything the ranks share, validated before the run starts.
struct ReplayPlan {
  const Trace& trace;
  bool wait_points = false;
  bool free_any_source = false;  ///< ReplayOptions::free_any_source
  std::vector<std::byte> zeros;              ///< every payload: read-only, shared
  std::vector<std::uint64_t> scratch_bytes;  ///< per rank: its largest output buffer
  /// Per rank, per event: its call site differs from the previous event's (the first
  /// event's always does). Found here, in one pass through each rank's events in memory
  /// order, so that a rank's fiber touches a site's strings only where it changes: with
  /// hundreds of ranks taking turns, comparing them there cost a cache miss per operation.
  std::vector<std::vector<bool>> new_site;
  GroupTable groups;
  /// Per rank, written by its own fiber only: the recorded operation it waits for (null
  /// when it waits for none), so that a deadlock names the recorded call each rank is in.
  std::vector<const TraceEvent*> waiting_in;
  std::atomic<std::uint64_t> posted = 0;  ///< operations re-issued, for progress
  std::unique_ptr<Progress> progress;

  ReplayPlan(const Trace& t, const ReplayOptions& options)
      : trace(t),
        free_any_source(options.free_any_source),
        scratch_bytes(t.ranks.size(), 0),
        new_site(t.ranks.size()),
        groups(t),
        waiting_in(t.ranks.size()) {
    const std::string_view version = trace.header.version;
    wait_points = version != "1.0" && version.starts_with("1.");
    LargestBuffer input;
    std::vector<LargestBuffer> output(trace.ranks.size());
    for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
      const SiteRef* previous = nullptr;
      new_site[r].reserve(trace.ranks[r].size());
      for (const TraceEvent& e : trace.ranks[r]) {
        check_replayable(e);
        const BufferCounts need = buffer_bytes(trace, e, options.max_buffer_bytes);
        input.offer(need.input, e);
        output[r].offer(need.output, e);
        new_site[r].push_back(previous == nullptr || !(*previous == e.site));
        previous = &e.site;
      }
      scratch_bytes[r] = output[r].bytes;
    }
    check_memory(input, output, options);
    zeros.assign(static_cast<std::size_t>(input.bytes), std::byte{0});
  }

 private:
  void check_replayable(const TraceEvent& e) const {
    if (e.op == OpKind::send && e.tag < 0) unreplayable(trace, e, "a send's tag must be >= 0");
    if (e.op == OpKind::recv && e.tag < 0 && e.tag != kAnyTag) {
      unreplayable(trace, e, fmt::format("receive tag {}", e.tag));
    }
    if (e.op == OpKind::send && e.peer == kNoRank) unreplayable(trace, e, "a send needs a peer");
    if (takes_root(e.op) && e.root == kNoRank) {
      unreplayable(trace, e, "a rooted collective needs a root");
    }
  }

  /// Refuses, before any is allocated, buffers that together exceed the memory limit,
  /// naming the operation with the largest one.
  void check_memory(const LargestBuffer& input, const std::vector<LargestBuffer>& output,
                    const ReplayOptions& options) const {
    const bool by_default = options.max_memory_bytes == 0;
    const std::uint64_t limit =
        by_default ? default_replay_memory_limit() : options.max_memory_bytes;
    std::uint64_t total = input.bytes;
    LargestBuffer largest = input;
    for (const LargestBuffer& rank : output) {
      const std::uint64_t room = std::numeric_limits<std::uint64_t>::max() - total;
      total = rank.bytes > room ? std::numeric_limits<std::uint64_t>::max() : total + rank.bytes;
      largest.offer(rank);
    }
    if (total <= limit) return;
    unreplayable(trace, *largest.needed_by,
                 fmt::format("the replay's buffers would take {} in all, over its memory limit of "
                             "{}{}{}; the largest is this operation's, {}",
                             format_bytes(total), format_bytes(limit),
                             by_default ? ", half of this machine's memory" : "",
                             options.memory_limit_hint, format_bytes(largest.bytes)));
  }
};

/// Gives the rank `e`'s recorded call site, so a replay's report names the same sites as the
/// run's (the trace outlives the replay and its report). Called only where the site changes
/// (ReplayPlan::new_site): the fabric remakes a site's recorded form whenever the pointers
/// it gets change, and consecutive operations of one call (an algorithm's messages) share
/// one site.
void give_call_site(RankContext& context, const TraceEvent& e) {
  context.set_call_site(
      {.file = e.site->file.empty() ? nullptr : e.site->file.c_str(),
       .line = e.site->line,
       .function = e.site->function.empty() ? nullptr : e.site->function.c_str(),
       .label = e.site->label.empty() ? nullptr : &e.site->label});
}

/// One operation re-issued as recorded, with zeros as its payload.
Request post(RankContext& context, const TraceEvent& e, ReplayPlan& plan,
             std::vector<std::byte>& scratch) {
  const Group& group = plan.groups.get(context, e.group);
  const auto n = static_cast<std::size_t>(group.size());
  const std::size_t unit = static_cast<std::size_t>(e.count);
  if (e.op == OpKind::send) {
    return context.isend(group, {plan.zeros.data(), unit, e.dtype}, group.group_rank(e.peer),
                         e.tag);
  }
  if (e.op == OpKind::recv) {
    // Forced to the recorded source (a receive from any source took this one when recorded),
    // unless the plan lets the schedule choose again.
    const bool any = e.peer == kNoRank || (plan.free_any_source && e.any_source);
    const int source = any ? kAnySource : group.group_rank(e.peer);
    return context.irecv(group, {scratch.data(), unit, e.dtype}, source, e.tag);
  }
  const BufferCounts counts = buffer_counts(e.op, unit, n, e.root == e.rank);
  const CollectiveArgs args{.op = e.op,
                            .reduce_op = e.reduce_op,
                            .root = e.root == kNoRank ? kNoRank : group.group_rank(e.root),
                            .input = {plan.zeros.data(), counts.input, e.dtype},
                            .output = {scratch.data(), counts.output, e.dtype}};
  return context.icollective(group, args);
}

/// An operation the rank has posted and not yet waited for or dropped.
struct OpenOperation {
  const TraceEvent* recorded = nullptr;
  Request request;
};

/// Waits for `op`, saying so in `waiting_in` while it does.
void wait_for(OpenOperation& op, const TraceEvent*& waiting_in) {
  waiting_in = op.recorded;
  op.request.wait();
  waiting_in = nullptr;
}

/// Done with `op` as the recording was: a pending operation was dropped, not waited for.
void close(OpenOperation& op, const TraceEvent*& waiting_in) {
  if (op.recorded->status == OpStatus::pending) {
    op.request = Request();
  } else {
    wait_for(op, waiting_in);
  }
}

/// Closes, in rank_seq order, every open operation that `next` does not list as in flight.
void close_before(std::vector<OpenOperation>& open, const TraceEvent& next,
                  const TraceEvent*& waiting_in) {
  const auto& keep = next.in_flight;  // ascending, as open is
  std::size_t kept = 0;
  auto k = keep.begin();
  for (auto& op : open) {
    const std::uint64_t seq = op.recorded->rank_seq;
    while (k != keep.end() && *k < seq) ++k;
    if (k != keep.end() && *k == seq) {
      open[kept++] = std::move(op);
    } else {
      close(op, waiting_in);
    }
  }
  open.resize(kept);
}

/// The rank's end: wait for what completed when recorded, drop what the recording dropped,
/// and last block on the operation it was blocked on (with no wait points: every pending one).
void close_at_end(std::vector<OpenOperation>& open, bool wait_points,
                  const TraceEvent*& waiting_in) {
  std::vector<OpenOperation*> blocked;
  for (auto& op : open) {
    const TraceEvent& e = *op.recorded;
    if (e.status == OpStatus::pending && (e.blocked || !wait_points)) {
      blocked.push_back(&op);
    } else {
      close(op, waiting_in);
    }
  }
  for (OpenOperation* op : blocked) wait_for(*op, waiting_in);
  open.clear();
}

/// The recording's compute without its virtual times (a cost model's prediction, which the
/// replay's own timing writes again).
ComputeWork untimed(const ComputeWork& work) {
  ComputeWork out = work;
  for (ComputeItem& item : out.items) item.vt_start_ns = item.vt_end_ns = kNoTime;
  return out;
}

/// Asks the CPU for what a rank reads of `e` ahead of its turn: its fields, wait points and
/// compute (its site only where it changes, ReplayPlan::new_site). With hundreds of ranks,
/// every other rank runs between two operations of one, and each operation's recorded event
/// was read from memory when its rank got to it; asked for one operation early, it is in
/// the cache by then.
void prefetch(const TraceEvent& e) {
  __builtin_prefetch(&e);
  __builtin_prefetch(&e.msg);
  __builtin_prefetch(&e.in_flight);
  __builtin_prefetch(&e.compute);
}

void replay_rank(RankContext& context, ReplayPlan& plan) {
  const auto& events = plan.trace.ranks[static_cast<std::size_t>(context.rank())];
  std::vector<std::byte> scratch(
      static_cast<std::size_t>(plan.scratch_bytes[static_cast<std::size_t>(context.rank())]));
  std::vector<OpenOperation> open;
  const TraceEvent*& waiting_in = plan.waiting_in[static_cast<std::size_t>(context.rank())];
  std::uint64_t next_seq = 0;
  const std::vector<bool>& new_site = plan.new_site[static_cast<std::size_t>(context.rank())];
  for (std::size_t i = 0; i < events.size(); ++i) {
    const TraceEvent& e = events[i];
    if (i + 1 < events.size()) prefetch(events[i + 1]);
    close_before(open, e, waiting_in);
    if (e.rank_seq != next_seq) context.set_next_rank_seq(e.rank_seq);
    if (!e.compute.empty()) context.compute_work(untimed(e.compute));
    if (new_site[i]) give_call_site(context, e);
    open.push_back({&e, post(context, e, plan, scratch)});
    plan.progress->update(plan.posted.fetch_add(1, std::memory_order_relaxed) + 1);
    next_seq = e.rank_seq + 1;
  }
  close_at_end(open, plan.wait_points, waiting_in);
  if (!events.empty() && !events.back().compute_after.empty()) {
    context.compute_work(untimed(events.back().compute_after));
  }
}

/// A deadlock in which a rank waits in a send that completed when recorded although no
/// receive of the recording takes it (it was buffered, and the rank went on): that message
/// is lost, the program's bug, and more to the point than the waits it leads to. Kinds
/// that name a receive's near miss (tag-, source-, group-mismatch) stay: they say more.
void blame_lost_message(const ReplayPlan& plan, const MessageLinks& links, RunReport& run) {
  static constexpr CulpritKind kGeneric[] = {
      CulpritKind::missing_participant, CulpritKind::deadlock,  CulpritKind::send_cycle,
      CulpritKind::recv_cycle,          CulpritKind::p2p_cycle, CulpritKind::collective_vs_p2p};
  if (run.status != RunStatus::deadlock ||
      std::find(std::begin(kGeneric), std::end(kGeneric), run.culprit.kind) == std::end(kGeneric)) {
    return;
  }
  std::set<std::pair<int, std::uint64_t>> received;  // (sender, rank_seq) of linked sends
  for (const MessageLink& link : links.links) received.emplace(link.id.sender, link.id.sender_seq);
  for (const TraceEvent* e : plan.waiting_in) {
    if (e == nullptr || e->op != OpKind::send || e->status != OpStatus::completed ||
        received.contains({e->rank, e->rank_seq})) {
      continue;
    }
    const std::string where = source_of(plan.trace, *e);
    run.culprit = {CulpritKind::lost_message,
                   fmt::format("rank {} waits in op #{}, its send of {} x {} to rank {} tag "
                               "{}{}{}, which no receive of the recording takes: the recorded rank "
                               "went on past it (the message was buffered), and under rendezvous "
                               "it never completes",
                               e->rank, e->rank_seq, e->count, to_string(e->dtype), e->peer, e->tag,
                               where.empty() ? "" : " at ", where),
                   {e->rank, e->peer}};
    return;
  }
}

/// Requests the recording left open at its ranks' finalize (ReplayReport::unfinished_requests):
/// the program's bug, as MUST reports a request leak, so a replay that otherwise ended ok
/// ends unsafe (exit 6) with culprit `request-leak` naming the first call ("FILE:LINE: rank 1
/// op #3 (irecv from rank 0 tag 3) is still open ...").
void blame_unfinished_requests(ReplayReport& report) {
  RunReport& run = report.run;
  const std::size_t n = report.unfinished_requests.size();
  if (run.status != RunStatus::ok || n == 0) return;
  std::vector<int> ranks;
  for (const std::string& line : report.unfinished_requests) {
    // The importer's wording: "...: rank R op #...".
    const std::size_t at = line.find(": rank ");
    if (at == std::string::npos) continue;
    const int rank = std::atoi(line.c_str() + at + 7);
    if (std::find(ranks.begin(), ranks.end(), rank) == ranks.end()) ranks.push_back(rank);
  }
  run.status = RunStatus::unsafe;
  run.summary = fmt::format("request leak: {} never completed before {} finalized",
                            plural(n, "request"), plural(ranks.size(), "rank"));
  run.culprit = {CulpritKind::request_leak,
                 report.unfinished_requests.front() +
                     (n > 1 ? fmt::format(" (and {} more)", n - 1) : std::string()),
                 std::move(ranks)};
  run.render_details();
}

/// The strings of the header's config array `key` (what an importer found): none if absent.
std::vector<std::string> config_lines(const Trace& trace, const char* key) {
  std::vector<std::string> lines;
  const auto it = trace.header.config.find(key);
  if (it == trace.header.config.end() || !it->is_array()) return lines;
  for (const auto& line : *it) {
    if (line.is_string()) lines.push_back(line.get<std::string>());
  }
  return lines;
}

/// Messages whose types the recording shows disagree (ReplayReport::type_mismatches): the
/// program's bug, which the trace's element types could not carry to the fabric, so a replay
/// that otherwise ended ok ends in a mismatch (exit 4) with culprit `message-mismatch` naming
/// the first ("message mismatch in world: rank 0 (op #0) sends ...").
void blame_type_mismatches(ReplayReport& report) {
  RunReport& run = report.run;
  const std::size_t n = report.type_mismatches.size();
  if (run.status != RunStatus::ok || n == 0) return;
  std::vector<int> ranks;
  for (const std::string& line : report.type_mismatches) {
    // The importer's wording: "...: rank S (op #N) sends ...; rank R (op #M) receives ...".
    for (std::size_t at = line.find("rank "); at != std::string::npos;
         at = line.find("rank ", at + 5)) {
      if (at + 5 >= line.size() || std::isdigit(static_cast<unsigned char>(line[at + 5])) == 0) {
        continue;
      }
      const int rank = std::atoi(line.c_str() + at + 5);
      if (std::find(ranks.begin(), ranks.end(), rank) == ranks.end()) ranks.push_back(rank);
    }
  }
  run.status = RunStatus::mismatch;
  run.summary = n == 1 ? report.type_mismatches.front()
                       : fmt::format("{} (and {} more)", report.type_mismatches.front(), n - 1);
  run.culprit = {CulpritKind::message_mismatch, run.summary, std::move(ranks)};
  run.render_details();
}

/// The trace's own consistency: each message's send and receive hashes, where both exist.
void check_recorded_hashes(const Trace& trace, const MessageLinks& links, ReplayReport& report) {
  for (const MessageLink& link : links.links) {
    const auto& send = trace.ranks[static_cast<std::size_t>(link.send.rank)][link.send.index];
    const auto& recv = trace.ranks[static_cast<std::size_t>(link.recv.rank)][link.recv.index];
    if (!send.has_hash || !recv.has_hash) continue;
    ++report.hashes_checked;
    if (send.hash == recv.hash) continue;
    if (report.hash_mismatches++ == 0) {
      report.first_hash_mismatch = fmt::format(
          "rank {} op #{} received hash {} for message {}:{}, whose send has hash {}", recv.rank,
          recv.rank_seq, format_hash(recv.hash), send.rank, send.rank_seq, format_hash(send.hash));
    }
  }
}

}  // namespace

std::string format_bytes(std::uint64_t bytes) {
  using Unit = std::pair<std::uint64_t, const char*>;
  for (const auto& [size, unit] :
       {Unit{1 << 30, "GiB"}, Unit{1 << 20, "MiB"}, Unit{1 << 10, "KiB"}}) {
    if (bytes >= size) {
      return fmt::format("{} bytes ({:.1f} {})", bytes, static_cast<double>(bytes) / size, unit);
    }
  }
  return fmt::format("{} bytes", bytes);
}

ReplayReport replay_trace(const Trace& trace, const ReplayOptions& options) {
  ReplayPlan plan(trace, options);
  ReplayReport report;
  report.world_size = trace.header.world_size;
  report.wait_points = plan.wait_points;
  report.unfinished_requests = config_lines(trace, "unfinished_requests");
  report.type_mismatches = config_lines(trace, "type_mismatches");
  report.recording_notes = config_lines(trace, "notes");
  for (const auto& events : trace.ranks) report.recorded_operations += events.size();
  plan.progress = std::make_unique<Progress>("replaying", report.recorded_operations,
                                             Progress::Unit::items, "operations");
  const MessageLinks links = link_messages(trace);
  report.recorded_messages = links.links.size();
  check_recorded_hashes(trace, links, report);

  auto checker = std::make_shared<detail::ReplayChecker>(trace, links, options.cluster.trace_sink);
  ClusterOptions cluster = options.cluster;
  cluster.world_size = trace.header.world_size;
  cluster.trace_sink = checker;
  if (!cluster.trace_config.contains("program")) cluster.trace_config["program"] = "replay";
  Engine replay_engine(cluster);
  const auto start = std::chrono::steady_clock::now();
  report.run = replay_engine.run([&plan](RankContext& context) { replay_rank(context, plan); });
  report.elapsed = std::chrono::steady_clock::now() - start;
  plan.progress->finish();
  blame_lost_message(plan, links, report.run);
  blame_type_mismatches(report);
  blame_unfinished_requests(report);
  checker->summarize(report);  // after report.run: where ranks stopped needs it
  return report;
}

}  // namespace ranklab
