// Where the fabric's trace events go. The sink belongs to the cluster that writes into
// it (no singletons); a cluster with no sink records nothing and pays nothing.
#pragma once

#include <filesystem>
#include <mutex>
#include <span>
#include <vector>

#include "traces/event.hpp"

namespace ranklab {

/// Receives every operation of a run. `record` may be called from several OS threads,
/// but never concurrently: the fabric serialises calls under its own lock.
class TraceSink {
 public:
  virtual ~TraceSink() = default;

  /// One operation, completed or (at the end of a failed run) still pending.
  virtual void record(const TraceEvent& event) = 0;
  /// The same, for an event its caller has no more use for: a sink that keeps events takes
  /// its vectors and site instead of copying them (the fabric records ~100 events a
  /// training step; bench/RESULTS.md, "recording"). By default, `record`.
  virtual void record_moved(TraceEvent&& event) { record(event); }

  /// Compute `rank` did after its last operation (its `compute_after`), when it ended.
  virtual void record_compute_after(int rank, const ComputeWork& work) = 0;

  /// The run ended; `header` lists every group the run created. Called exactly once.
  virtual void finish(const TraceHeader& header) = 0;

  /// Whether the sink keeps every event until `finish`, so that `recorded` answers: the
  /// fabric then keeps no ring of each rank's recent events of its own (a second copy of
  /// a million ranks' events), and its reports read them here.
  virtual bool keeps_events() const { return false; }
  /// Before `finish`: `rank`'s events so far, in the order `record` got them (empty if
  /// none, or if the sink keeps none). Called under the same serialisation as `record`.
  virtual std::span<const TraceEvent> recorded(int /*rank*/) const { return {}; }
};

/// Keeps the whole trace in memory, each rank's events in `rank_seq` order.
class MemorySink : public TraceSink {
 public:
  void record(const TraceEvent& event) override;
  void record_moved(TraceEvent&& event) override;
  void record_compute_after(int rank, const ComputeWork& work) override;
  void finish(const TraceHeader& header) override;
  bool keeps_events() const override { return true; }
  std::span<const TraceEvent> recorded(int rank) const override;

  /// The trace after `finish`.
  const Trace& trace() const { return trace_; }
  /// The trace after `finish`, moved out (the sink is left empty).
  Trace take() { return std::move(trace_); }

 private:
  /// The vector `event` goes to, after checking its rank, with room for two (under mutex_).
  std::vector<TraceEvent>& events_of(const TraceEvent& event);

  std::mutex mutex_;
  Trace trace_;
  std::vector<ComputeWork> compute_after_;  ///< by rank, until finish() puts it on the last event
};

/// Writes trace format v1 (JSON Lines) to a file when the run finishes. Events are
/// written rank by rank in `rank_seq` order, so the file depends on the program and the
/// policy only, never on which OS thread completed what first.
class JsonlFileSink : public TraceSink {
 public:
  explicit JsonlFileSink(std::filesystem::path path);

  void record(const TraceEvent& event) override;
  void record_moved(TraceEvent&& event) override;
  void record_compute_after(int rank, const ComputeWork& work) override;
  /// Writes the file; throws TraceError naming the path if it cannot.
  void finish(const TraceHeader& header) override;
  bool keeps_events() const override { return true; }
  std::span<const TraceEvent> recorded(int rank) const override { return events_.recorded(rank); }

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  MemorySink events_;
};

}  // namespace ranklab
