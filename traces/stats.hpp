// Traffic of a trace, as `ranklab stats` prints it. What counts, precisely:
// - Only completed operations are traffic; pending ones (a deadlocked or failed run) are
//   counted apart.
// - A point-to-point message counts once, at its send: one message of `bytes` bytes from
//   the sender to `peer`, under the send's group kind, and in the rank x rank matrix. Its
//   receive is the same message and is counted only in the per-operation table.
// - A collective counts once per member that called it, with that member's `bytes` (the
//   per-rank unit of FORMAT.md: e.g. the all_reduce buffer), under its group kind. It is
//   not in the matrix: a native collective's wire pattern is not recorded. Collectives
//   run by an algorithm (`--algo ring`) appear as their sends, which the matrix does count.
// - The group kind is the group name up to its first '[': `tp[0,1]` -> `tp`, `world`.
// - Staging copies (format 1.3) count once each, with their bytes, per direction.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>

#include "traces/event.hpp"

namespace ranklab {

/// `tp[0,1]` -> `tp`; a name without '[' is its own kind.
std::string_view group_kind(std::string_view group_name);

/// A number of operations (messages or calls) and their bytes.
struct Traffic {
  std::uint64_t count = 0;
  std::uint64_t bytes = 0;

  void add(std::uint64_t more_bytes) {
    ++count;
    bytes += more_bytes;
  }
  Traffic& operator+=(const Traffic& other) {
    count += other.count;
    bytes += other.bytes;
    return *this;
  }
  friend bool operator==(const Traffic&, const Traffic&) = default;
};

/// Traffic of the groups of one kind.
struct GroupKindTraffic {
  std::uint64_t groups = 0;  ///< how many groups of this kind the header lists
  Traffic p2p;               ///< messages sent within these groups
  Traffic collectives;       ///< member calls of collectives on these groups

  friend bool operator==(const GroupKindTraffic&, const GroupKindTraffic&) = default;
};

/// Everything `ranklab stats` reports. Maps keep their keys sorted, so output is stable.
struct TraceStats {
  int world_size = 0;
  std::uint64_t events = 0;
  std::uint64_t completed = 0;
  std::uint64_t pending = 0;
  std::uint64_t dangling_receives = 0;  ///< receives whose send is not in the trace
  std::map<std::string, GroupKindTraffic> group_kinds;
  std::map<std::string, Traffic> operations;  ///< by op name: calls and their bytes
  /// p2p messages from sender (first) to receiver (second); only pairs that talked.
  std::map<std::pair<int, int>, Traffic> matrix;
  /// Staging copies (format 1.3) of every rank, device to host and host to device: a
  /// device's tensors staged through host memory for communication.
  Traffic staged_to_host;
  Traffic staged_to_device;
};

/// Counts a trace's traffic by the rules at the top of this file.
TraceStats compute_stats(const Trace& trace);

/// The report as text; the matrix is a table up to kDenseMatrixRanks ranks, a list of the
/// busiest pairs beyond.
std::string format_stats(const TraceStats& stats, std::string_view trace_name);

/// The report as JSON (`ranklab stats --json`, and the data of the HTML report).
nlohmann::json stats_to_json(const TraceStats& stats);

inline constexpr int kDenseMatrixRanks = 16;
inline constexpr std::size_t kListedPairs = 32;

}  // namespace ranklab
