#include "traces/event_text.hpp"

#include <fmt/format.h>

#include <iterator>

#include "traces/error.hpp"
#include "traces/hash.hpp"

namespace ranklab {

const std::string& group_name(const TraceHeader& header, const TraceEvent& event) {
  if (event.group >= header.groups.size()) {
    throw UsageError(fmt::format("rank {} rank_seq {}: group index {} but the header has {} groups",
                                 event.rank, event.rank_seq, event.group, header.groups.size()));
  }
  return header.groups[event.group].name;
}

std::string event_label(const TraceEvent& event, const TraceHeader& header) {
  if (event.op == OpKind::send) return fmt::format("send to {}", event.peer);
  if (event.op == OpKind::recv) {
    return event.peer == kNoRank ? std::string("recv from any")
                                 : fmt::format("recv from {}", event.peer);
  }
  return fmt::format("{} {}", to_string(event.op), group_name(header, event));
}

std::string describe_event(const TraceEvent& event, const TraceHeader& header) {
  std::string text =
      fmt::format("#{} {} {}", event.rank_seq, to_string(event.op), group_name(header, event));
  auto out = std::back_inserter(text);
  if (is_point_to_point(event.op)) {
    if (event.peer == kNoRank) {
      fmt::format_to(out, " peer any");
    } else {
      fmt::format_to(out, " peer {}", event.peer);
    }
    fmt::format_to(out, " tag {}", event.tag);
  }
  fmt::format_to(out, " {} x {}", event.count, to_string(event.dtype));
  if (event.has_hash) fmt::format_to(out, " hash {}", format_hash(event.hash));
  if (!is_point_to_point(event.op)) fmt::format_to(out, " coll_seq {}", event.coll_seq);
  if (event.root != kNoRank) fmt::format_to(out, " root {}", event.root);
  if (event.has_reduce_op) fmt::format_to(out, " {}", to_string(event.reduce_op));
  if (event.msg.valid()) fmt::format_to(out, " msg {}:{}", event.msg.sender, event.msg.sender_seq);
  if (event.status != OpStatus::completed) fmt::format_to(out, " {}", to_string(event.status));
  return text;
}

std::string source_of(const Trace& trace, const TraceEvent& event) {
  const SourceLine& at = event.source;
  if (!at.known() || at.file >= trace.sources.files.size()) return "";
  // A Flight Recorder import (no header line: not read back from JSON Lines) numbers its
  // operations' dump entries, not lines: `line` is the entry's index + 1 (flight_recorder.cpp).
  const bool entries = trace.sources.header_line == 0 && trace.header.config.is_object() &&
                       trace.header.config.value("program", "") == "pytorch-fr";
  if (entries) return fmt::format("{}: entry {}", trace.sources.files[at.file], at.line - 1);
  return fmt::format("{}:{}", trace.sources.files[at.file], at.line);
}

std::string header_source(const Trace& trace) {
  if (trace.sources.header_line == 0 || trace.sources.files.empty()) return "";
  return fmt::format("{}:{}", trace.sources.files.front(), trace.sources.header_line);
}

std::string describe_site(const CallSite& site) {
  std::string out;
  if (!site.file.empty() || site.line != 0) {
    out += " at " + (site.file.empty() ? std::string("?") : site.file);
    if (site.line != 0) out += fmt::format(":{}", site.line);
  }
  if (!site.function.empty()) {
    out += out.empty() ? " in " + site.function : " (" + site.function + ")";
  }
  if (!site.label.empty()) out += fmt::format(" for \"{}\"", site.label);
  return out;
}

}  // namespace ranklab
