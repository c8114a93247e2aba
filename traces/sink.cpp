#include "traces/sink.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "traces/error.hpp"
#include "traces/jsonl.hpp"

namespace ranklab {

std::vector<TraceEvent>& MemorySink::events_of(const TraceEvent& event) {
  if (event.rank < 0) {
    throw UsageError(fmt::format("trace sink: event with negative rank {} (rank_seq {})",
                                 event.rank, event.rank_seq));
  }
  const auto rank = static_cast<std::size_t>(event.rank);
  if (trace_.ranks.size() <= rank) trace_.ranks.resize(rank + 1);
  std::vector<TraceEvent>& events = trace_.ranks[rank];
  // Room for two from the first: most ranks of a large run post a collective and a barrier,
  // and growing 1 -> 2 cost a malloc, a move and a free per rank (bench/RESULTS.md §3).
  if (events.empty()) events.reserve(2);
  return events;
}

void MemorySink::record(const TraceEvent& event) {
  std::lock_guard lock(mutex_);
  events_of(event).push_back(event);
}

void MemorySink::record_moved(TraceEvent&& event) {
  std::lock_guard lock(mutex_);
  events_of(event).push_back(std::move(event));
}

std::span<const TraceEvent> MemorySink::recorded(int rank) const {
  if (rank < 0 || static_cast<std::size_t>(rank) >= trace_.ranks.size()) return {};
  return trace_.ranks[static_cast<std::size_t>(rank)];
}

void MemorySink::record_compute_after(int rank, const ComputeWork& work) {
  if (work.empty()) return;
  if (rank < 0) throw UsageError(fmt::format("trace sink: compute of negative rank {}", rank));
  std::lock_guard lock(mutex_);
  if (compute_after_.size() <= static_cast<std::size_t>(rank))
    compute_after_.resize(static_cast<std::size_t>(rank) + 1);
  compute_after_[static_cast<std::size_t>(rank)].add(work);
}

void MemorySink::finish(const TraceHeader& header) {
  if (header.world_size < 0) {
    throw UsageError(fmt::format("trace sink: negative world_size {}", header.world_size));
  }
  const auto world = static_cast<std::size_t>(header.world_size);
  std::lock_guard lock(mutex_);
  // Dropping events of ranks outside the world would hide a fabric bug; refuse instead.
  for (std::size_t rank = world; rank < trace_.ranks.size(); ++rank) {
    if (!trace_.ranks[rank].empty()) {
      throw UsageError(
          fmt::format("trace sink: rank {} recorded events but world_size is {}", rank, world));
    }
  }
  trace_.header = header;
  trace_.ranks.resize(world);
  // Threads complete operations in any order; rank_seq is the order the program issued them.
  const auto by_seq = [](const TraceEvent& a, const TraceEvent& b) {
    return a.rank_seq < b.rank_seq;
  };
  for (auto& events : trace_.ranks) {
    // Usually in order already (one thread, or one operation at a time); stable_sort would
    // still take and free a buffer per rank.
    if (!std::is_sorted(events.begin(), events.end(), by_seq)) {
      std::stable_sort(events.begin(), events.end(), by_seq);
    }
  }
  // Compute after a rank's last operation goes on that operation (FORMAT.md); a rank with
  // no operation has nothing to carry it.
  for (std::size_t rank = 0; rank < compute_after_.size() && rank < world; ++rank) {
    if (!trace_.ranks[rank].empty()) trace_.ranks[rank].back().compute_after.add(compute_after_[rank]);
  }
  compute_after_.clear();
}

JsonlFileSink::JsonlFileSink(std::filesystem::path path) : path_(std::move(path)) {}

void JsonlFileSink::record(const TraceEvent& event) { events_.record(event); }

void JsonlFileSink::record_moved(TraceEvent&& event) { events_.record_moved(std::move(event)); }

void JsonlFileSink::record_compute_after(int rank, const ComputeWork& work) {
  events_.record_compute_after(rank, work);
}

void JsonlFileSink::finish(const TraceHeader& header) {
  events_.finish(header);
  write_trace_file(path_, events_.trace());
}

}  // namespace ranklab
