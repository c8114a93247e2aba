// diff_trace_files: two JSON Lines traces compared as they are read (issue 17 §3: diff's
// memory in one rank's events, not the files'). Whichever file is behind is read next (the
// lower rank, then the fewer events of it), so files ranklab wrote, which list each rank's
// events together, advance together; a rank's events wait only until the other file reaches
// them, and are dropped once compared or once the rank diverged.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "traces/diff.hpp"
#include "traces/error.hpp"
#include "traces/jsonl.hpp"
#include "traces/progress.hpp"

namespace ranklab {
namespace {

/// Which file an event came from.
enum Side : int { kA = 0, kB = 1 };

/// What read_trace would have to sort or would refuse: the whole-file path must decide.
struct NeedsWholeFiles {};

/// One rank of both files: what is read of it and not yet compared (one side at a time:
/// an event meeting one of the other side is compared at once), and what read_trace checks.
struct RankState {
  std::vector<TraceEvent> waiting;  ///< from side `waiting_side`, oldest at `head`
  std::size_t head = 0;
  Side waiting_side = kA;
  std::uint64_t compared = 0;
  bool diverged = false;
  std::uint64_t seen[2] = {0, 0};
  std::uint64_t last_seq[2] = {0, 0};
  bool ended[2] = {false, false};  ///< the side's last event had compute_after
};

class StreamingDiff {
 public:
  StreamingDiff(JsonlEventReader& a, JsonlEventReader& b, Progress& progress)
      : readers_{&a, &b}, progress_(progress) {
    diff_.a_header = a.header();
    diff_.b_header = b.header();
    diff_.header_differences = header_differences(diff_.a_header, diff_.b_header);
    const int ranks = std::max(diff_.a_header.world_size, diff_.b_header.world_size);
    diff_.ranks_compared = ranks;
    ranks_.resize(static_cast<std::size_t>(ranks));
    found_.resize(static_cast<std::size_t>(ranks));
  }

  TraceDiff run() {
    advance(kA);
    advance(kB);
    while (current_[kA] || current_[kB]) {
      const Side side = !current_[kB] ? kA : !current_[kA] ? kB : behind();
      take(side);
      advance(side);
    }
    for (std::size_t rank = 0; rank < ranks_.size(); ++rank) finish_rank(rank);
    for (auto& divergence : found_) {
      if (divergence) diff_.divergences.push_back(std::move(*divergence));
    }
    return std::move(diff_);
  }

 private:
  /// The side to read from: the one at the lower rank, or at fewer events of the same rank.
  Side behind() const {
    const TraceEvent& a = *current_[kA];
    const TraceEvent& b = *current_[kB];
    if (a.rank != b.rank) return a.rank < b.rank ? kA : kB;
    const RankState& state = ranks_[static_cast<std::size_t>(a.rank)];
    return state.seen[kA] <= state.seen[kB] ? kA : kB;
  }

  void advance(Side side) {
    TraceEvent event;
    if (readers_[side]->next(event)) {
      current_[side] = std::move(event);
    } else {
      current_[side].reset();
    }
    progress_.update(readers_[kA]->bytes_read() + readers_[kB]->bytes_read());
  }

  void take(Side side) {
    TraceEvent& event = *current_[side];
    (side == kA ? diff_.a_events : diff_.b_events) += 1;
    RankState& state = ranks_[static_cast<std::size_t>(event.rank)];
    // read_trace sorts a rank's events by rank_seq and refuses repeats and compute_after
    // before the rank's last event: leave those files to it.
    if ((state.seen[side] > 0 && event.rank_seq <= state.last_seq[side]) || state.ended[side]) {
      throw NeedsWholeFiles{};
    }
    state.seen[side] += 1;
    state.last_seq[side] = event.rank_seq;
    state.ended[side] = !event.compute_after.empty();
    if (state.diverged) return;
    const bool others_wait = state.head < state.waiting.size() && state.waiting_side != side;
    if (!others_wait) {
      if (state.head == state.waiting.size()) {
        state.waiting.clear();
        state.head = 0;
      }
      state.waiting_side = side;
      state.waiting.push_back(std::move(event));
      return;
    }
    TraceEvent& other = state.waiting[state.head++];
    const TraceEvent& a = side == kA ? event : other;
    const TraceEvent& b = side == kA ? other : event;
    std::vector<std::string_view> fields = differing_fields(a, diff_.a_header, b, diff_.b_header);
    if (!fields.empty()) {
      found_[static_cast<std::size_t>(event.rank)] =
          RankDivergence{event.rank, state.compared, a, b, std::move(fields)};
      drop(state);
      return;
    }
    ++state.compared;
    if (state.head == state.waiting.size()) {
      state.waiting.clear();
      state.head = 0;
    }
  }

  /// A diverged rank's further events are only checked, never kept.
  static void drop(RankState& state) {
    state.diverged = true;
    state.waiting = {};
    state.head = 0;
  }

  /// At the end of both files: a side with events left had the longer sequence.
  void finish_rank(std::size_t rank) {
    RankState& state = ranks_[rank];
    if (state.diverged || state.head == state.waiting.size()) return;
    TraceEvent& left = state.waiting[state.head];
    RankDivergence divergence{static_cast<int>(rank), state.compared, std::nullopt, std::nullopt, {}};
    (state.waiting_side == kA ? divergence.a : divergence.b) = std::move(left);
    found_[rank] = std::move(divergence);
    drop(state);
  }

  JsonlEventReader* readers_[2];
  Progress& progress_;
  std::optional<TraceEvent> current_[2];
  std::vector<RankState> ranks_;
  std::vector<std::optional<RankDivergence>> found_;  ///< by rank
  TraceDiff diff_;
};

}  // namespace

TraceDiff diff_trace_files(const std::filesystem::path& a, const std::filesystem::path& b) {
  try {
    JsonlEventFile file_a(a, /*show_progress=*/false);
    JsonlEventFile file_b(b, /*show_progress=*/false);
    Progress progress(fmt::format("comparing {} and {}", a.string(), b.string()),
                      file_a.reader.total_bytes() + file_b.reader.total_bytes(),
                      Progress::Unit::bytes);
    return StreamingDiff(file_a.reader, file_b.reader, progress).run();
  } catch (const NeedsWholeFiles&) {
  } catch (const TraceError&) {
    // Read whole below, A first, so the error is the one read_trace_file reports.
  }
  const Trace trace_a = read_trace_file(a);
  const Trace trace_b = read_trace_file(b);
  return diff_traces(trace_a, trace_b);
}

}  // namespace ranklab
