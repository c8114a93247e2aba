// One operation of one rank, as trace format v1 records it (traces/FORMAT.md).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "traces/types.hpp"

namespace ranklab {

inline constexpr int kNoRank = -1;  ///< `peer` or `root` of an operation that has none
inline constexpr std::int64_t kNoCollective = -1;  ///< `coll_seq` of a point-to-point op
/// The most elements one operation may move (256 Ti): the reader and importers refuse more.
inline constexpr std::uint64_t kMaxTraceCount = std::uint64_t{1} << 48;

/// A message id shared by a send and the receive that matched it: the sender's rank
/// and the sender's `rank_seq` of that send. It depends only on the program, never on
/// the schedule, so traces of one program compare equal across policies.
struct MessageId {
  int sender = kNoRank;
  std::uint64_t sender_seq = 0;

  bool valid() const { return sender != kNoRank; }
  friend bool operator==(const MessageId&, const MessageId&) = default;
};

inline constexpr std::int64_t kNoTime = -1;  ///< an absent virtual time

/// Which way a staging copy moved a communicated tensor (format 1.3): from the rank's
/// device into the host buffer the fabric sends from, or from the host buffer it received
/// into back to the device. FORMAT.md writes them `d2h` and `h2d`.
enum class StagingCopy { none, to_host, to_device };

/// One compute event (format 1.2): a labelled piece of computation, such as the forward of
/// layer 3 for micro-batch 2 of chunk 0. `layer`, `microbatch` and `chunk` are -1 where they
/// do not apply. Its cost is FLOPs (at the cost model's FLOP rate), seconds, or both; a layer
/// pass (layer >= 0) is priced by the cost model's layer_seconds when it has one.
struct ComputeItem {
  std::string label;
  int layer = -1;
  int microbatch = -1;
  int chunk = -1;
  double flops = 0;
  double seconds = 0;
  /// A staging copy (format 1.3, collectives/staging.hpp): its direction, its bytes and the
  /// device copied to or from ("cpu-staged:3"); `none` for computation. A cost model times
  /// it on its PCIe link (pcie.latency + bytes / pcie.bandwidth).
  StagingCopy copy = StagingCopy::none;
  std::uint64_t bytes = 0;
  std::string device;
  /// Timed traces: when the cost model puts it (kNoTime: not timed).
  std::int64_t vt_start_ns = kNoTime;
  std::int64_t vt_end_ns = kNoTime;

  /// Backward passes cost twice their forward when priced per layer (dX and dW).
  bool backward() const { return label == "backward"; }
  bool staging() const { return copy != StagingCopy::none; }
  friend bool operator==(const ComputeItem&, const ComputeItem&) = default;
};

/// Computation a rank did between two operations (format 1.1): FLOPs (a cost model turns
/// them into time with its FLOP rate), seconds, or both. SimGrid's TI traces record FLOPs;
/// a program that knows its compute time (a pipeline schedule) gives seconds. From format
/// 1.2 it may be a list of compute events (`items`); `flops` and `seconds` are then their
/// sums. No items: one unlabelled amount, as 1.1 writes it.
struct ComputeWork {
  double flops = 0;
  double seconds = 0;
  std::vector<ComputeItem> items;

  bool empty() const { return flops == 0 && seconds == 0 && items.empty(); }
  /// Appends a compute event (an unlabelled amount held so far becomes the first one).
  void add(ComputeItem item);
  /// Appends `other` after this: its items, or its unlabelled amount.
  void add(const ComputeWork& other);
  /// The work as compute events: its items, or its unlabelled amount as one (none if empty).
  std::vector<ComputeItem> as_items() const;
  friend bool operator==(const ComputeWork&, const ComputeWork&) = default;
};


/// Where the program issued an operation (format 1.2): a source file, a line (0: unknown)
/// and a function, and what the operation is in the program's own terms (`label`, "TP
/// all_reduce of layer 2 forward"). ranklab's runs record the Communicator call's C++
/// source location, the file relative to the source tree; importers fill it from what the
/// recording kept (a PyTorch Flight Recorder entry's innermost user frame); empty when unknown.
struct CallSite {
  std::string file;
  std::uint32_t line = 0;
  std::string function;
  std::string label;

  bool empty() const { return file.empty() && function.empty() && line == 0 && label.empty(); }
  friend bool operator==(const CallSite&, const CallSite&) = default;
};

/// A TraceEvent's call site: one shared, immutable CallSite, or none. A run has few distinct
/// sites and a million-rank trace millions of events, so events hold a reference (16 bytes)
/// and the strings live once per distinct site (CallSiteTable interns them; traces/
/// call_site_table.hpp). Shared ownership keeps copies of events and traces simple: an event
/// copied into another trace keeps its site alive. Reads as a `const CallSite&` (`site->file`,
/// or passed where a CallSite is taken); compares by value.
class SiteRef {
 public:
  SiteRef() = default;
  /// A site of its own (not shared with other events): for importers and tests that build
  /// single events. An empty site is none.
  SiteRef(CallSite site)  // NOLINT(google-explicit-constructor): events are assigned sites
      : site_(site.empty() ? nullptr : std::make_shared<const CallSite>(std::move(site))) {}
  explicit SiteRef(std::shared_ptr<const CallSite> site) : site_(std::move(site)) {}

  const CallSite& operator*() const { return site_ ? *site_ : none(); }
  const CallSite* operator->() const { return &**this; }
  operator const CallSite&() const { return **this; }  // NOLINT(google-explicit-constructor)
  bool empty() const { return !site_ || site_->empty(); }

  friend bool operator==(const SiteRef& a, const SiteRef& b) {
    return a.site_ == b.site_ || *a == *b;
  }
  friend bool operator==(const SiteRef& a, const CallSite& b) { return *a == b; }

 private:
  static const CallSite& none() {
    static const CallSite empty;
    return empty;
  }
  std::shared_ptr<const CallSite> site_;
};

/// Where an event was read from: kept for errors found after reading (replay refusing an
/// operation names FILE:LINE). Not part of the event's value: events equal field for field
/// are equal wherever they were read, so == ignores it.
struct SourceLine {
  std::uint32_t file = 0;  ///< index into TraceSources::files
  std::uint64_t line = 0;  ///< from 1; 0: not read from a file

  bool known() const { return line != 0; }
  friend bool operator==(const SourceLine&, const SourceLine&) { return true; }
};

/// One operation of one rank. Point-to-point ops carry `peer` (global rank) and `msg`;
/// collectives carry `coll_seq` (the group's collective index) and, where it applies,
/// `root` (global rank) and `reduce_op`.
///
/// The one-byte fields sit together and the four-byte ones in pairs: a trace holds every
/// event of every rank (two per rank of a million-rank all_reduce), and this order keeps
/// an event at 248 bytes instead of 272 (bench/RESULTS.md, "A million ranks").
struct TraceEvent {
  int rank = 0;                 ///< global rank that issued the operation
  std::uint32_t group = 0;      ///< index into TraceHeader::groups
  std::uint64_t rank_seq = 0;   ///< the rank's own operation counter, from 0
  OpKind op = OpKind::send;
  OpStatus status = OpStatus::completed;
  DataType dtype = DataType::u8;
  /// A receive posted from any source (format 1.3): `peer` is the sender it matched, which
  /// another schedule may change (`replay --wildcards free`, `explore`).
  bool any_source = false;
  bool has_hash = false;
  bool has_reduce_op = false;
  ReduceOp reduce_op = ReduceOp::sum;
  /// Pending operations only: the rank was blocked waiting for this one when the run ended
  /// (false: the rank had dropped its handle, or was waiting for another operation).
  bool blocked = false;
  int peer = kNoRank;           ///< global rank of the other side (matched source for recv)
  int tag = 0;
  std::uint64_t count = 0;      ///< elements
  std::uint64_t bytes = 0;
  std::uint64_t hash = 0;       ///< xxHash64 of the payload (see FORMAT.md for which)
  std::int64_t coll_seq = kNoCollective;
  int root = kNoRank;
  MessageId msg;
  std::uint64_t lamport = 0;
  // Wait points (format 1.1): what replay needs to re-issue the rank's operations with the
  // same overlap. Both depend on program order only, never on the schedule: `in_flight`
  // here, `blocked` above.
  /// rank_seq of this rank's earlier operations that were posted but not yet waited for
  /// (non-blocking calls whose handle was still open) when this one was posted, ascending.
  /// Empty: every earlier operation had been waited for, as with blocking calls.
  std::vector<std::uint64_t> in_flight;
  // Time (format 1.1).
  ComputeWork compute;        ///< done before posting this operation
  ComputeWork compute_after;  ///< the rank's last operation only: done after it
  /// Virtual time in ns from the run's start, as a cost model predicts it: when the rank
  /// posted the operation, and when it completed (kNoTime: not timed, or never completed).
  std::int64_t vt_post_ns = kNoTime;
  std::int64_t vt_end_ns = kNoTime;
  /// Where the program issued it (format 1.2); not compared by diff or replay.
  SiteRef site;
  SourceLine source;  ///< where it was read, for error messages; ignored by ==

  friend bool operator==(const TraceEvent&, const TraceEvent&) = default;
};

/// A communication group as the trace names it (`world`, `tp[0,1]`).
struct TraceGroup {
  std::string name;
  std::vector<int> ranks;  ///< global ranks in group-rank order

  friend bool operator==(const TraceGroup&, const TraceGroup&) = default;
};

/// The first line of a trace file.
struct TraceHeader {
  static constexpr const char* kFormat = "ranklab-trace";
  static constexpr const char* kVersion = "1.4";  ///< what the writer produces

  std::string version = kVersion;
  int world_size = 0;
  std::vector<TraceGroup> groups;  ///< groups[0] is always `world`
  nlohmann::json config = nlohmann::json::object();  ///< policy, seed, send mode, threads, ...

  friend bool operator==(const TraceHeader&, const TraceHeader&) = default;
};

/// The files a trace was read from (a SimGrid TI trace has one per rank), which the events'
/// SourceLine name. Like SourceLine, not part of the trace's value: == ignores it.
struct TraceSources {
  std::vector<std::string> files;
  std::uint64_t header_line = 0;  ///< the header's line in files[0]; 0: none (built, imported)

  friend bool operator==(const TraceSources&, const TraceSources&) { return true; }
};

/// A whole trace in memory: header plus every rank's events in `rank_seq` order.
struct Trace {
  TraceHeader header;
  std::vector<std::vector<TraceEvent>> ranks;  ///< ranks[r] = rank r's events
  TraceSources sources;                        ///< where it was read; ignored by ==

  friend bool operator==(const Trace&, const Trace&) = default;
};

/// The version an importer writes: `floor` (the newest version whose fields it fills), or
/// 1.4 where an event carries what 1.4 added (a 16-bit float, a bitwise reduction), so a
/// reader of an older minor version refuses the trace rather than misread it.
inline std::string imported_version(const Trace& trace, std::string floor) {
  for (const std::vector<TraceEvent>& events : trace.ranks) {
    for (const TraceEvent& e : events) {
      if (e.dtype == DataType::bf16 || e.dtype == DataType::f16 ||
          (e.has_reduce_op && is_bitwise(e.reduce_op))) {
        return "1.4";
      }
    }
  }
  return floor;
}

}  // namespace ranklab
