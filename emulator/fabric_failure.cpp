// How a rank's failure ends the run. It does not end it at once: the other ranks go on
// until none of them can do more (each is blocked, or polls with nothing changing, or has
// ended), and only then is the verdict declared and the waiters cancelled. Stopping them
// at once would stop each wherever the scheduler happened to have it, so the trace, which
// records what every rank did, would depend on which thread ran first (traces/FORMAT.md,
// Determinism). What a rank can still do without the failed one depends on the program
// alone, so the settled state, like a deadlock, is the same under any schedule.
#include "emulator/errors.hpp"
#include "emulator/fabric.hpp"

namespace ranklab {

void Fabric::note_failure(int rank, std::exception_ptr error) {
  RankSlot& me = *ranks_[static_cast<std::size_t>(rank)];
  if (me.failure) return;  // a kill fault noted it before the rank unwound
  me.failure = std::move(error);
  me.failed_at = me.lamport;
  me.error = detail::describe_exception(me.failure);
  failure_pending_ = true;
  ++progress_;
}

void Fabric::rank_failed(int rank, std::exception_ptr error) {
  Lock lock(mutex_);
  RankSlot& me = *ranks_[static_cast<std::size_t>(rank)];
  me.state = RankState::failed;
  ++progress_;
  if (--live_ == 0) all_ended_.notify_all();
  if (verdict_ != RunStatus::ok) {  // a consequence of the verdict, not its cause
    me.error = detail::describe_exception(error);
    return;
  }
  note_failure(rank, std::move(error));
  check_for_deadlock();
}

bool Fabric::settled() const {
  const int stalled = stalled_epoch_ == progress_ ? stalled_ : 0;
  return blocked_ + stalled >= live_;
}

void Fabric::note_poll(int rank) {
  if (!failure_pending_ || verdict_ != RunStatus::ok) return;
  RankSlot& me = *ranks_[static_cast<std::size_t>(rank)];
  if (me.poll_epoch != progress_) {  // something happened since its last poll
    me.poll_epoch = progress_;
    return;
  }
  if (me.stall_epoch == progress_) return;  // counted already
  me.stall_epoch = progress_;
  if (stalled_epoch_ != progress_) {
    stalled_epoch_ = progress_;
    stalled_ = 0;
  }
  ++stalled_;
  check_for_deadlock();
}

void Fabric::declare_failure() {
  // The failure that happened first in the program's own order: Lamport clocks order
  // causally related failures, and the rank number breaks ties between concurrent ones.
  int root = -1;
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    const RankSlot& slot = *ranks_[r];
    if (!slot.failure) continue;
    if (root < 0 || slot.failed_at < ranks_[static_cast<std::size_t>(root)]->failed_at) {
      root = static_cast<int>(r);
    }
  }
  failure_pending_ = false;
  if (root < 0) return;  // unreachable: a pending failure has its rank
  RankSlot& me = *ranks_[static_cast<std::size_t>(root)];
  bool mismatch = false;
  try {
    std::rethrow_exception(me.failure);
  } catch (const MismatchError&) {
    mismatch = true;
  } catch (...) {
  }
  if (mismatch) {
    // The error's first line names the group and call; the culprit is the first rank whose
    // call differed, which need not be the rank that noticed.
    const int culprit = me.mismatch_culprit >= 0 ? me.mismatch_culprit : root;
    std::string summary = me.error.substr(0, me.error.find('\n'));
    if (me.mismatch_culprit >= 0) {
      summary += fmt::format(" (first rank that differs: {})", culprit);
    }
    const bool message = summary.starts_with("message mismatch");
    culprit_ = {message ? "message-mismatch" : "collective-mismatch",
                message || me.mismatch_sentence.empty() ? summary : me.mismatch_sentence,
                {culprit}};
    abort(RunStatus::mismatch, culprit, me.failure, std::move(summary), me.error);
  } else {
    culprit_ = {"rank-failure", fmt::format("rank {} failed first: {}", root, me.error), {root}};
    abort(RunStatus::rank_failed, root, me.failure, fmt::format("rank {} failed: {}", root, me.error),
          failure_details(root));
  }
}

}  // namespace ranklab
