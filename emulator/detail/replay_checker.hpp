// The trace sink a replay records into: it compares each replayed operation with the
// recorded one as it arrives (nothing is kept but the differences), and passes events on
// to the user's sink, if any. Private to emulator/.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "emulator/replay.hpp"
#include "traces/messages.hpp"
#include "traces/sink.hpp"

namespace ranklab::detail {

class ReplayChecker final : public TraceSink {
 public:
  /// `recorded` must outlive the checker. Replayed group ids are the recorded header's
  /// indices (replay creates the groups in header order).
  ReplayChecker(const Trace& recorded, const MessageLinks& links,
                std::shared_ptr<TraceSink> forward);

  /// Called under the fabric's lock, never concurrently.
  void record(const TraceEvent& event) override;
  void record_compute_after(int rank, const ComputeWork& work) override;
  void finish(const TraceHeader& header) override;

  /// Fills the comparison part of `report`: operations, divergences, messages; where each
  /// rank stopped if the run did not end ok (report.run must be set).
  void summarize(ReplayReport& report) const;

 private:
  struct Difference {
    std::size_t index = 0;  ///< into the rank's recorded events
    TraceEvent replayed;
    std::vector<std::string_view> fields;
  };
  struct RankCheck {
    std::vector<bool> seen;    ///< by recorded index: the replay issued it
    std::vector<bool> linked;  ///< by recorded index: a receive whose send is in the trace
    std::uint64_t seen_count = 0;
    std::uint64_t differing = 0;
    std::vector<std::size_t> stuck;  ///< recorded indices replayed as still pending
    std::size_t last = SIZE_MAX;     ///< the highest recorded index replayed
    bool has_first = false;
    Difference first;  ///< the lowest index that differs
  };

  const Trace& recorded_;
  std::shared_ptr<TraceSink> forward_;
  std::vector<RankCheck> ranks_;
  std::uint64_t reproduced_messages_ = 0;
};

}  // namespace ranklab::detail
