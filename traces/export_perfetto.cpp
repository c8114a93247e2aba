#include "traces/export_perfetto.hpp"

#include <fmt/format.h>

#include <iterator>
#include <ostream>
#include <string>

#include "traces/event_text.hpp"
#include "traces/jsonl.hpp"
#include "traces/messages.hpp"
#include "traces/output_file.hpp"
#include "traces/timeline.hpp"

namespace ranklab {
namespace {

constexpr std::size_t kFlushBytes = std::size_t{1} << 20;

std::string quote(std::string_view text) {
  return nlohmann::json(std::string(text))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

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

void add_rank_metadata(EventWriter& events, int rank) {
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
}

void add_slices(EventWriter& events, const Trace& trace, const Timeline& timeline, int rank) {
  const auto& rank_events = trace.ranks[static_cast<std::size_t>(rank)];
  for (std::size_t index : timeline.order(rank)) {
    const TraceEvent& event = rank_events[index];
    const Placement& at = timeline.at({rank, index});
    std::string name = event_label(event, trace.header);
    if (event.status != OpStatus::completed) name += " (pending)";
    events.add(R"({{"ph":"X","name":{},"cat":"{}","pid":{},"tid":{},"ts":{},"dur":{},"args":{}}})",
               quote(name), is_point_to_point(event.op) ? "p2p" : "collective", rank + 1, rank + 1,
               micros(at.start_ns), micros(at.duration_ns), format_event(event, trace.header));
  }
}

/// Each end sits mid-slice, so it falls inside the slice it binds to ("bp":"e" = enclosing).
void add_flows(EventWriter& events, const Trace& trace, const Timeline& timeline) {
  std::uint64_t id = 0;
  for (const MessageLink& link : link_messages(trace).links) {
    ++id;
    const std::string name = fmt::format("\"msg {}:{}\"", link.id.sender, link.id.sender_seq);
    const Placement& send = timeline.at(link.send);
    const Placement& recv = timeline.at(link.recv);
    events.add(R"({{"ph":"s","name":{},"cat":"message","id":{},"pid":{},"tid":{},"ts":{}}})", name,
               id, link.send.rank + 1, link.send.rank + 1,
               micros(send.start_ns + send.duration_ns / 2));
    events.add(
        R"({{"ph":"f","bp":"e","name":{},"cat":"message","id":{},"pid":{},"tid":{},"ts":{}}})",
        name, id, link.recv.rank + 1, link.recv.rank + 1,
        micros(recv.start_ns + recv.duration_ns / 2));
  }
}

std::string other_data(const Trace& trace, const Timeline& timeline) {
  const nlohmann::json data = {{"source", "ranklab"},
                               {"trace_version", trace.header.version},
                               {"world_size", trace.header.world_size},
                               {"time_base", to_string(timeline.base())},
                               {"time_unit", axis_unit(timeline.base())},
                               {"config", trace.header.config}};
  return data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

void write_perfetto(std::ostream& out, const Trace& trace) {
  const Timeline timeline(trace);
  out << R"({"displayTimeUnit":"ns","otherData":)" << other_data(trace, timeline)
      << R"(,"traceEvents":[)";
  EventWriter events(out);
  for (std::size_t rank = 0; rank < trace.ranks.size(); ++rank) {
    add_rank_metadata(events, static_cast<int>(rank));
    add_slices(events, trace, timeline, static_cast<int>(rank));
  }
  add_flows(events, trace, timeline);
  events.flush();
  out << "\n]}\n";
}

void write_perfetto_file(const std::filesystem::path& path, const Trace& trace) {
  write_output_file(path, "Perfetto JSON", [&](std::ostream& out) { write_perfetto(out, trace); });
}

}  // namespace ranklab
