#include "traces/diff.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <map>
#include <span>

#include "traces/event_text.hpp"
#include "traces/jsonl.hpp"

namespace ranklab {
namespace {

using nlohmann::json;

/// One event with the header that names its group.
struct Side {
  const TraceEvent& event;
  const TraceHeader& header;
};

struct Field {
  std::string_view name;
  bool (*equal)(const Side& a, const Side& b);
};

template <auto Member>
bool same(const Side& a, const Side& b) {
  return a.event.*Member == b.event.*Member;
}

// The compared fields, in the order of the format's lines (diff.hpp lists what is left out).
const std::array<Field, 14> kFields = {{
    {"rank_seq", same<&TraceEvent::rank_seq>},
    {"op", same<&TraceEvent::op>},
    {"status", same<&TraceEvent::status>},
    // By name: the index depends on the order groups were created in, which is not compared.
    {"group",
     [](const Side& a, const Side& b) {
       // One header (replay compares with its recording): the same index is the same name.
       if (&a.header == &b.header && a.event.group == b.event.group) return true;
       return group_name(a.header, a.event) == group_name(b.header, b.event);
     }},
    {"peer", same<&TraceEvent::peer>},
    {"tag", same<&TraceEvent::tag>},
    {"dtype", same<&TraceEvent::dtype>},
    {"count", same<&TraceEvent::count>},
    {"bytes", same<&TraceEvent::bytes>},
    // A hash is "when known" (FORMAT.md): a side without one cannot disagree.
    {"hash",
     [](const Side& a, const Side& b) {
       return !a.event.has_hash || !b.event.has_hash || a.event.hash == b.event.hash;
     }},
    {"coll_seq", same<&TraceEvent::coll_seq>},
    {"root", same<&TraceEvent::root>},
    {"reduce_op",
     [](const Side& a, const Side& b) {
       return a.event.has_reduce_op == b.event.has_reduce_op &&
              (!a.event.has_reduce_op || a.event.reduce_op == b.event.reduce_op);
     }},
    {"msg", same<&TraceEvent::msg>},
}};

std::span<const TraceEvent> rank_events(const Trace& trace, std::size_t rank) {
  if (rank >= trace.ranks.size()) return {};
  return trace.ranks[rank];
}

/// The first divergence of one rank, if any.
std::optional<RankDivergence> diverge_rank(const Trace& a, const Trace& b, std::size_t rank) {
  const auto a_events = rank_events(a, rank);
  const auto b_events = rank_events(b, rank);
  const std::size_t common = std::min(a_events.size(), b_events.size());
  for (std::size_t i = 0; i <= common; ++i) {
    const TraceEvent* ea = i < a_events.size() ? &a_events[i] : nullptr;
    const TraceEvent* eb = i < b_events.size() ? &b_events[i] : nullptr;
    if (ea == nullptr && eb == nullptr) return std::nullopt;
    if (ea == nullptr || eb == nullptr) {
      return RankDivergence{static_cast<int>(rank), i, ea ? std::optional(*ea) : std::nullopt,
                            eb ? std::optional(*eb) : std::nullopt, {}};
    }
    std::vector<std::string_view> fields = differing_fields(*ea, a.header, *eb, b.header);
    if (!fields.empty()) return RankDivergence{static_cast<int>(rank), i, *ea, *eb, std::move(fields)};
  }
  return std::nullopt;
}

std::size_t event_count(const Trace& trace) {
  std::size_t total = 0;
  for (const auto& events : trace.ranks) total += events.size();
  return total;
}

/// "peer, hash" or, when one side ended, which one.
std::string divergence_reason(const RankDivergence& d) {
  if (!d.a) return fmt::format("A ends after {} operations", d.op_index);
  if (!d.b) return fmt::format("B ends after {} operations", d.op_index);
  return fmt::format("{}", fmt::join(d.fields, ", "));
}

std::string side_text(const std::optional<TraceEvent>& event, const TraceHeader& header) {
  return !event ? std::string("(end of trace)") : describe_event(*event, header);
}

json side_json(const std::optional<TraceEvent>& event, const TraceHeader& header) {
  return !event ? json(nullptr) : json::parse(format_event(*event, header));
}

std::string summary_line(const TraceDiff& diff, std::string_view a_name, std::string_view b_name) {
  const std::string sides =
      fmt::format("A {} ({} ops), B {} ({} ops)", a_name, diff.a_events, b_name, diff.b_events);
  if (diff.identical()) {
    return fmt::format("identical: {} ranks, no divergence; {}", diff.ranks_compared, sides);
  }
  std::string first = "header only";
  if (!diff.divergences.empty()) {
    const RankDivergence& d = diff.divergences.front();
    first = fmt::format("first: rank {} at op #{}: {}", d.rank, d.op_index, divergence_reason(d));
  }
  return fmt::format("different: {} of {} ranks diverge, {} header differences ({}); {}",
                     diff.divergences.size(), diff.ranks_compared, diff.header_differences.size(),
                     first, sides);
}

}  // namespace

std::vector<std::string> header_differences(const TraceHeader& a, const TraceHeader& b) {
  std::vector<std::string> out;
  if (a.world_size != b.world_size) {
    out.push_back(fmt::format("world_size {} in A, {} in B", a.world_size, b.world_size));
  }
  std::map<std::string_view, const TraceGroup*> b_groups;
  for (const TraceGroup& group : b.groups) b_groups.emplace(group.name, &group);
  for (const TraceGroup& group : a.groups) {
    const auto it = b_groups.find(group.name);
    if (it == b_groups.end()) {
      out.push_back(fmt::format("group '{}' only in A", group.name));
    } else if (it->second->ranks != group.ranks) {
      out.push_back(fmt::format("group '{}' has ranks [{}] in A, [{}] in B", group.name,
                                fmt::join(group.ranks, ","), fmt::join(it->second->ranks, ",")));
    }
    if (it != b_groups.end()) b_groups.erase(it);
  }
  for (const TraceGroup& group : b.groups) {
    if (b_groups.contains(group.name))
      out.push_back(fmt::format("group '{}' only in B", group.name));
  }
  return out;
}

const std::vector<std::string_view>& compared_fields() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    for (const Field& field : kFields) out.push_back(field.name);
    return out;
  }();
  return names;
}

std::vector<std::string_view> differing_fields(const TraceEvent& a, const TraceHeader& a_header,
                                               const TraceEvent& b, const TraceHeader& b_header,
                                               HashField hash) {
  const Side sa{a, a_header};
  const Side sb{b, b_header};
  std::vector<std::string_view> out;
  for (const Field& field : kFields) {
    if (hash == HashField::ignored && field.name == "hash") continue;
    if (!field.equal(sa, sb)) out.push_back(field.name);
  }
  return out;
}

TraceDiff diff_traces(const Trace& a, const Trace& b) {
  TraceDiff diff;
  diff.a_header = a.header;
  diff.b_header = b.header;
  diff.a_events = event_count(a);
  diff.b_events = event_count(b);
  diff.header_differences = header_differences(a.header, b.header);
  const std::size_t ranks = std::max(a.ranks.size(), b.ranks.size());
  diff.ranks_compared = static_cast<int>(ranks);
  for (std::size_t rank = 0; rank < ranks; ++rank) {
    if (auto divergence = diverge_rank(a, b, rank)) diff.divergences.push_back(*divergence);
  }
  return diff;
}

std::string format_diff(const TraceDiff& diff, std::string_view a_name, std::string_view b_name) {
  std::string out =
      fmt::format("compared per rank, in order: {}; ignored: lamport, header config\n",
                  fmt::join(compared_fields(), " "));
  auto it = std::back_inserter(out);
  for (const std::string& difference : diff.header_differences) {
    fmt::format_to(it, "header: {}\n", difference);
  }
  for (const RankDivergence& d : diff.divergences) {
    fmt::format_to(it, "rank {}: first divergence at op #{}: {}\n  A: {}\n  B: {}\n", d.rank,
                   d.op_index, divergence_reason(d), side_text(d.a, diff.a_header),
                   side_text(d.b, diff.b_header));
  }
  out += summary_line(diff, a_name, b_name);
  out += '\n';
  return out;
}

json diff_to_json(const TraceDiff& diff, std::string_view a_name, std::string_view b_name) {
  json ranks = json::array();
  for (const RankDivergence& d : diff.divergences) {
    ranks.push_back({{"rank", d.rank},
                     {"op_index", d.op_index},
                     {"reason", divergence_reason(d)},
                     {"fields", d.fields},
                     {"a", side_json(d.a, diff.a_header)},
                     {"b", side_json(d.b, diff.b_header)}});
  }
  const auto side = [](std::string_view name, const TraceHeader& header, std::uint64_t events) {
    return json{{"path", name}, {"world_size", header.world_size}, {"events", events}};
  };
  return {{"identical", diff.identical()},
          {"a", side(a_name, diff.a_header, diff.a_events)},
          {"b", side(b_name, diff.b_header, diff.b_events)},      {"compared_fields", compared_fields()},
          {"ignored", {"lamport", "config"}}, {"header_differences", diff.header_differences},
          {"ranks", std::move(ranks)},        {"summary", summary_line(diff, a_name, b_name)}};
}

}  // namespace ranklab
