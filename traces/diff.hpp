// `ranklab diff A B`: where two traces of (supposedly) the same program part ways.
//
// Each rank's events are compared in order (rank_seq order, as the reader returns them);
// the first event that differs is that rank's divergence. Compared, per event:
//   rank_seq op status group peer tag dtype count bytes hash coll_seq root reduce_op msg
// with groups compared by name, and `hash` only when both events carry one. Ignored:
//   lamport  - it records which rank got where first, which policies change (FORMAT.md);
//   config   - the header's run configuration (policy, seed, threads, send mode, ...);
//   the order in which the header lists groups.
// Header differences that do count: world_size, and a group name present in one trace
// only or with other members. So two runs of a deterministic program under any policy and
// thread count compare identical; receives from any source may legitimately differ.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "traces/event.hpp"

namespace ranklab {

/// Field names in the order diff compares them (the list above).
const std::vector<std::string_view>& compared_fields();

/// Whether differing_fields compares payload hashes: replay leaves them out (its payloads
/// are synthetic), and so allocates nothing for an event that matches.
enum class HashField { compared, ignored };

/// The compared fields where `a` and `b` differ, in compared_fields() order.
std::vector<std::string_view> differing_fields(const TraceEvent& a, const TraceHeader& a_header,
                                               const TraceEvent& b, const TraceHeader& b_header,
                                               HashField hash = HashField::compared);

/// The first difference on one rank.
struct RankDivergence {
  int rank = 0;
  std::size_t op_index = 0;       ///< position in the rank's sequence, from 0
  std::optional<TraceEvent> a;    ///< nullopt: A's sequence ended before this operation
  std::optional<TraceEvent> b;
  std::vector<std::string_view> fields;  ///< differing fields; empty when a side ended
};

/// The result of comparing two traces; it keeps what it reports (the traces need not outlive
/// it, and diff_trace_files never holds them whole).
struct TraceDiff {
  TraceHeader a_header;
  TraceHeader b_header;
  std::uint64_t a_events = 0;
  std::uint64_t b_events = 0;
  std::vector<std::string> header_differences;
  std::vector<RankDivergence> divergences;  ///< one per diverging rank, by rank
  int ranks_compared = 0;

  bool identical() const { return header_differences.empty() && divergences.empty(); }
};

/// Compares `a` and `b` by the rules at the top of this file.
TraceDiff diff_traces(const Trace& a, const Trace& b);

/// The same for two JSON Lines files, read side by side: memory grows with how far the
/// files' orders drift apart (about one rank's events for files ranklab wrote, which list
/// each rank's events together), not with their size. Files that need what read_trace does
/// across a whole file (a rank's events out of rank_seq order), and malformed ones, are
/// read whole, so results and errors are read_trace's.
TraceDiff diff_trace_files(const std::filesystem::path& a, const std::filesystem::path& b);

/// The header differences that count (the list at the top of this file).
std::vector<std::string> header_differences(const TraceHeader& a, const TraceHeader& b);

/// The report as text: one block per diverging rank, then a one-line summary starting
/// with "identical:" or "different:".
std::string format_diff(const TraceDiff& diff, std::string_view a_name, std::string_view b_name);

/// The report as JSON (`ranklab diff --json`); events appear as their trace lines.
nlohmann::json diff_to_json(const TraceDiff& diff, std::string_view a_name,
                            std::string_view b_name);

}  // namespace ranklab
