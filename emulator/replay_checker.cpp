#include "emulator/detail/replay_checker.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "traces/diff.hpp"
#include "traces/event_text.hpp"

namespace ranklab::detail {

ReplayChecker::ReplayChecker(const Trace& recorded, const MessageLinks& links,
                             std::shared_ptr<TraceSink> forward)
    : recorded_(recorded), forward_(std::move(forward)), ranks_(recorded.ranks.size()) {
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    ranks_[r].seen.assign(recorded.ranks[r].size(), false);
    ranks_[r].linked.assign(recorded.ranks[r].size(), false);
  }
  for (const MessageLink& link : links.links) {
    ranks_[static_cast<std::size_t>(link.recv.rank)].linked[link.recv.index] = true;
  }
}

void ReplayChecker::record(const TraceEvent& event) {
  if (forward_) {
    // The replayed trace says nothing about payloads: no hashes of the synthetic zeros, so
    // `ranklab diff` compares it with the recording field for field.
    TraceEvent forwarded = event;
    forwarded.has_hash = false;
    forwarded.hash = 0;
    forward_->record(forwarded);
  }
  const auto& events = recorded_.ranks[static_cast<std::size_t>(event.rank)];
  const std::size_t index = event_index(events, event.rank_seq);
  // Replay issues recorded operations only, with their recorded numbers.
  if (index == events.size()) return;
  const TraceEvent& recorded = events[index];
  RankCheck& check = ranks_[static_cast<std::size_t>(event.rank)];
  if (check.seen[index]) return;  // recorded once; cannot happen, but never count twice
  check.seen[index] = true;
  ++check.seen_count;
  if (event.status == OpStatus::pending) check.stuck.push_back(index);
  if (check.last == SIZE_MAX || index > check.last) check.last = index;

  // Synthetic payloads: the replayed hash says nothing about the recorded one.
  std::vector<std::string_view> fields =
      differing_fields(recorded, recorded_.header, event, recorded_.header, HashField::ignored);
  if (fields.empty()) {
    if (check.linked[index] && event.op == OpKind::recv) ++reproduced_messages_;
    return;
  }
  ++check.differing;
  if (!check.has_first || index < check.first.index) {
    TraceEvent replayed = event;
    replayed.has_hash = false;
    check.has_first = true;
    check.first = Difference{index, std::move(replayed), std::move(fields)};
  }
}

void ReplayChecker::record_compute_after(int rank, const ComputeWork& work) {
  if (forward_) forward_->record_compute_after(rank, work);
}

void ReplayChecker::finish(const TraceHeader& header) {
  if (forward_) forward_->finish(header);
}

void ReplayChecker::summarize(ReplayReport& report) const {
  report.reproduced_messages = reproduced_messages_;
  if (!report.run.ok()) {
    for (std::size_t r = 0; r < ranks_.size(); ++r) {
      const RankCheck& check = ranks_[r];
      const auto stop = [&](std::size_t index, bool in_progress) {
        const TraceEvent& e = recorded_.ranks[r][index];
        report.stops.push_back({static_cast<int>(r), e.rank_seq,
                                describe_event(e, recorded_.header), e.site, in_progress});
      };
      for (const std::size_t index : check.stuck) stop(index, true);
      if (check.stuck.empty() && check.last != SIZE_MAX) stop(check.last, false);
    }
  }
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    const RankCheck& check = ranks_[r];
    const auto& events = recorded_.ranks[r];
    report.replayed_operations += check.seen_count;
    const std::uint64_t never_issued = events.size() - check.seen_count;
    report.diverging_operations += check.differing + never_issued;
    // The first divergence is the lowest recorded index that differs or was never issued.
    std::size_t first_unseen = events.size();
    if (never_issued > 0) {
      first_unseen = static_cast<std::size_t>(
          std::find(check.seen.begin(), check.seen.end(), false) - check.seen.begin());
    }
    const std::size_t first_diff = check.has_first ? check.first.index : events.size();
    if (first_unseen == events.size() && first_diff == events.size()) continue;
    const std::size_t index = std::min(first_unseen, first_diff);
    const TraceEvent& recorded = events[index];
    ReplayDivergence divergence;
    divergence.rank = static_cast<int>(r);
    divergence.rank_seq = recorded.rank_seq;
    divergence.recorded = describe_event(recorded, recorded_.header);
    if (index == first_diff) {
      divergence.replayed = describe_event(check.first.replayed, recorded_.header);
      divergence.fields = check.first.fields;
    } else {
      divergence.replayed = fmt::format("never issued ({} of the rank's {} operations were)",
                                        check.seen_count, events.size());
    }
    report.divergences.push_back(std::move(divergence));
  }
}

}  // namespace ranklab::detail
