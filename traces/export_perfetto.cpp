#include "traces/export_perfetto.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <ostream>
#include <string>
#include <vector>

#include "traces/detail/json_writing.hpp"
#include "traces/event_text.hpp"
#include "traces/jsonl.hpp"
#include "traces/messages.hpp"
#include "traces/output_file.hpp"
#include "traces/progress.hpp"
#include "traces/timeline.hpp"
#include "traces/timeline_shapes.hpp"

namespace ranklab {
namespace {

using detail::kFlushBytes;
using detail::quote_json;

/// Collects the traceEvents array, handing the stream large chunks (traces reach millions
/// of events; one nlohmann object per event would cost an order of magnitude more).
class EventWriter {
 public:
  explicit EventWriter(std::ostream& out) : out_(out) { buffer_.reserve(kFlushBytes + 4096); }

  template <typename... Args>
  void add(fmt::format_string<Args...> format, Args&&... args) {
    if (!first_) buffer_.push_back(',');
    first_ = false;
    buffer_.push_back('\n');
    fmt::format_to(std::back_inserter(buffer_), format, std::forward<Args>(args)...);
    if (buffer_.size() >= kFlushBytes) flush();
  }
  void flush() {
    out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
    buffer_.clear();
  }

 private:
  std::ostream& out_;
  fmt::memory_buffer buffer_;
  bool first_ = true;
};

/// Chrome's ts and dur are microseconds; fractions are allowed.
double micros(double ns) { return ns / 1000.0; }

/// A rank's compute thread (beside its "operations" thread, tid pid): compute and operations
/// overlap when a non-blocking operation is in flight, and one thread's slices must nest.
int compute_tid(int world_size, int rank) { return world_size + rank + 1; }

void add_rank_metadata(EventWriter& events, int rank, int world_size, bool has_compute) {
  const int pid = rank + 1;
  events.add(
      R"({{"ph":"M","name":"process_name","pid":{},"tid":{},"ts":0,"args":{{"name":"rank {}"}}}})",
      pid, pid, rank);
  events.add(
      R"({{"ph":"M","name":"process_sort_index","pid":{},"tid":{},"ts":0,"args":{{"sort_index":{}}}}})",
      pid, pid, rank);
  events.add(
      R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"ts":0,"args":{{"name":"operations"}}}})",
      pid, pid);
  if (has_compute) {
    events.add(
        R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"ts":0,"args":{{"name":"compute"}}}})",
        pid, compute_tid(world_size, rank));
  }
}

/// The rank's compute events on its compute thread, where the cost model put them (virtual
/// time only: a logical axis has no durations for compute).
void add_compute_slices(EventWriter& events, const Trace& trace, const Timeline& timeline,
                        int rank, const std::vector<bool>& shown) {
  if (timeline.base() != TimeBase::virtual_time) return;
  const int tid = compute_tid(trace.header.world_size, rank);
  const auto& rank_events = trace.ranks[static_cast<std::size_t>(rank)];
  for (std::size_t index = 0; index < rank_events.size(); ++index) {
    if (!shown[index]) continue;
    const TraceEvent& e = rank_events[index];
    for (const ComputeSlice& slice : timed_compute(e)) {
      const ComputeItem& item = *slice.item;
      nlohmann::json args = {{slice.after ? "after_rank_seq" : "before_rank_seq", e.rank_seq}};
      if (item.flops != 0) args["flops"] = item.flops;
      if (item.seconds != 0) args["s"] = item.seconds;
      events.add(
          R"({{"ph":"X","name":{},"cat":"compute","pid":{},"tid":{},"ts":{},"dur":{},"args":{}}})",
          quote_json(slice.name), rank + 1, tid, micros(static_cast<double>(item.vt_start_ns)),
          micros(static_cast<double>(item.vt_end_ns - item.vt_start_ns)), args.dump());
    }
  }
}

void add_slices(EventWriter& events, const Trace& trace, const Timeline& timeline, int rank,
                const std::vector<bool>& shown, Progress& progress, std::size_t& written) {
  const auto& rank_events = trace.ranks[static_cast<std::size_t>(rank)];
  for (std::size_t index : timeline.order(rank)) {
    if (!shown[index]) continue;
    progress.update(++written);
    const TraceEvent& event = rank_events[index];
    const Placement& at = timeline.at({rank, index});
    std::string name = event_label(event, trace.header);
    if (event.status != OpStatus::completed) name += " (pending)";
    events.add(R"({{"ph":"X","name":{},"cat":"{}","pid":{},"tid":{},"ts":{},"dur":{},"args":{}}})",
               quote_json(name), is_point_to_point(event.op) ? "p2p" : "collective", rank + 1,
               rank + 1, micros(at.start_ns), micros(at.duration_ns),
               format_event(event, trace.header));
  }
}

/// An arrow per message whose two ends are drawn, as message_span places it.
void add_flows(EventWriter& events, const Trace& trace, const Timeline& timeline,
               const std::vector<std::vector<bool>>& shown) {
  const auto drawn = [&](EventRef ref) {
    return shown[static_cast<std::size_t>(ref.rank)][ref.index];
  };
  std::uint64_t id = 0;
  for (const MessageLink& link : link_messages(trace).links) {
    ++id;
    if (!drawn(link.send) || !drawn(link.recv)) continue;
    const std::string name = fmt::format("\"msg {}:{}\"", link.id.sender, link.id.sender_seq);
    const MessageSpan span = message_span(timeline, link);
    events.add(R"({{"ph":"s","name":{},"cat":"message","id":{},"pid":{},"tid":{},"ts":{}}})", name,
               id, link.send.rank + 1, link.send.rank + 1, micros(span.leaves_ns));
    events.add(
        R"({{"ph":"f","bp":"e","name":{},"cat":"message","id":{},"pid":{},"tid":{},"ts":{}}})",
        name, id, link.recv.rank + 1, link.recv.rank + 1, micros(span.lands_ns));
  }
}

std::string other_data(const Trace& trace, const Timeline& timeline,
                       const PerfettoSummary& summary) {
  nlohmann::json data = {{"source", "ranklab"},
                         {"trace_version", trace.header.version},
                         {"world_size", trace.header.world_size},
                         {"time_base", to_string(timeline.base())},
                         {"time_unit", axis_unit(timeline.base())},
                         {"config", trace.header.config}};
  if (summary.capped()) {
    data["operations"] = summary.operations;
    data["operations_written"] = summary.written;
  }
  return data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

PerfettoSummary write_perfetto(std::ostream& out, const Trace& trace,
                               const PerfettoOptions& options) {
  const Timeline timeline(trace);
  const std::vector<std::vector<bool>> shown = earliest_events(trace, timeline, options.max_events);
  PerfettoSummary summary;
  for (const auto& events : trace.ranks) summary.operations += events.size();
  summary.written = options.max_events == 0 ? summary.operations
                                            : std::min(options.max_events, summary.operations);
  out << R"({"displayTimeUnit":"ns","otherData":)" << other_data(trace, timeline, summary)
      << R"(,"traceEvents":[)";
  EventWriter events(out);
  Progress progress("writing Perfetto JSON", summary.written, Progress::Unit::items, "operations");
  std::size_t written = 0;
  for (std::size_t rank = 0; rank < trace.ranks.size(); ++rank) {
    const int r = static_cast<int>(rank);
    const bool compute = timeline.base() == TimeBase::virtual_time &&
                         has_timed_compute(trace.ranks[rank]);
    add_rank_metadata(events, r, trace.header.world_size, compute);
    add_slices(events, trace, timeline, r, shown[rank], progress, written);
    if (compute) add_compute_slices(events, trace, timeline, r, shown[rank]);
  }
  add_flows(events, trace, timeline, shown);
  events.flush();
  out << "\n]}\n";
  return summary;
}

PerfettoSummary write_perfetto_file(const std::filesystem::path& path, const Trace& trace,
                                    const PerfettoOptions& options) {
  PerfettoSummary summary;
  write_output_file(path, "Perfetto JSON",
                    [&](std::ostream& out) { summary = write_perfetto(out, trace, options); });
  return summary;
}

}  // namespace ranklab
