// Progress of a long task on stderr, for a person watching it (issue 17 §3): loading a big
// trace, replaying, exporting, exploring schedules, a long training run.
//
// Shown only when stderr is a terminal, never in a pipe or a file (a log would fill with
// redrawn lines), and only once the task has run for two seconds, so quick commands print
// nothing. One line, redrawn in place at most five times a second and erased when the task
// ends, so what the command prints afterwards starts on a clean line. Environment:
// RANKLAB_PROGRESS=0 turns it off; RANKLAB_PROGRESS_DELAY_MS sets the two seconds (tests).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

namespace ranklab {

class Progress {
 public:
  enum class Unit { bytes, items };

  /// `task` names what runs ("reading t.jsonl"); `total` is what done() reaches at the end
  /// (0: unknown), counted in bytes or in `items` ("events", "schedules").
  Progress(std::string task, std::uint64_t total, Unit unit = Unit::items,
           std::string items = "");
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// `done` of `total` so far. Cheap enough to call per event: it looks at the clock once
  /// every few hundred calls, and not at all when stderr is not a terminal. Safe to call
  /// from several threads (replay's workers).
  void update(std::uint64_t done) {
    if (!enabled_.load(std::memory_order_relaxed) ||
        (calls_.fetch_add(1, std::memory_order_relaxed) & kCallsPerCheck) != 0) {
      return;
    }
    check(done);
  }

  /// The same for tasks whose steps take long (explore's schedules): looks at the clock on
  /// every call.
  void update_now(std::uint64_t done) {
    if (enabled_.load(std::memory_order_relaxed)) check(done);
  }

  /// Erases the line (the destructor does too).
  void finish();

  /// Whether progress would be drawn: stderr is a terminal and RANKLAB_PROGRESS is not 0.
  static bool wanted();

  /// The line as drawn for `done` after `seconds`: "reading t.jsonl: 45% (120 of 271 MB), 3 s".
  std::string line(std::uint64_t done, double seconds) const;

 private:
  static constexpr std::uint64_t kCallsPerCheck = 255;
  void check(std::uint64_t done);

  std::string task_;
  std::uint64_t total_;
  Unit unit_;
  std::string items_;
  std::atomic<bool> enabled_;
  bool drawn_ = false;  ///< under mutex_, as what follows
  std::atomic<std::uint64_t> calls_ = 0;
  std::mutex mutex_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point next_draw_;
};

}  // namespace ranklab
