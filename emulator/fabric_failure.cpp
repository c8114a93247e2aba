// How a rank's failure ends the run. It does not end it at once: the other ranks go on
// until none of them can do more (each is blocked, or polls with nothing changing, or has
// ended), and only then is the verdict declared and the waiters cancelled. Stopping them
// at once would stop each wherever the scheduler happened to have it, so the trace, which
// records what every rank did, would depend on which thread ran first (traces/FORMAT.md,
// Determinism). What a rank can still do without the failed one depends on the program
// alone, so the settled state, like a deadlock, is the same under any schedule.
#include <new>

#include "comm/errors.hpp"
#include "emulator/fabric.hpp"

namespace ranklab {

void Fabric::note_failure(int rank, std::exception_ptr error,
                          std::optional<std::uint64_t> failed_at) {
  RankSlot& me = *ranks_[static_cast<std::size_t>(rank)];
  if (me.failure_noted) return;  // a kill fault noted it before the rank unwound
  try {
    me.error = detail::describe_exception(error);
  } catch (const std::bad_alloc&) {  // out of memory: the report goes without the text
  }
  me.failure_noted = true;
  me.failed_at = failed_at.value_or(me.lamport);
  failure_pending_ = true;
  ++progress_;
  // The failure that happened first in the program's own order: Lamport clocks order
  // causally related failures, and the rank number breaks ties between concurrent ones.
  const RankSlot* root =
      root_candidate_ < 0 ? nullptr : ranks_[static_cast<std::size_t>(root_candidate_)].get();
  if (root == nullptr || me.failed_at < root->failed_at ||
      (me.failed_at == root->failed_at && rank < root_candidate_)) {
    root_candidate_ = rank;
    root_candidate_error_ = std::move(error);
  }
}

void Fabric::rank_failed(int rank, std::exception_ptr error) {
  Lock lock(mutex_);
  RankSlot& me = *ranks_[static_cast<std::size_t>(rank)];
  flush_compute(rank);
  me.state = RankState::failed;
  ++progress_;
  if (--live_ == 0) all_ended_.notify_all();
  if (verdict_ != RunStatus::ok) {  // a consequence of the verdict, not its cause
    me.error = detail::describe_exception(error);
    return;
  }
  note_failure(rank, std::move(error));
  try {
    check_for_deadlock();
  } catch (const std::bad_alloc&) {
    // No memory to write the verdict now: a later check, or finish(), declares it.
  }
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
  // Everything that allocates comes before abort(), so that out of memory leaves the
  // failure pending, to be declared again.
  const int root = root_candidate_;
  if (root < 0) return;  // unreachable: a pending failure has its rank
  RankSlot& me = *ranks_[static_cast<std::size_t>(root)];
  const std::exception_ptr error = root_candidate_error_;
  bool mismatch = false;
  try {
    std::rethrow_exception(error);
  } catch (const MismatchError&) {
    mismatch = true;
  } catch (...) {
  }
  if (mismatch) {
    // A collective call's verdict (Fabric::judge_call) names the ranks it blames; a message
    // mismatch is the rank's own (its receive found it).
    std::string summary = me.error.substr(0, me.error.find('\n'));
    if (me.mismatch) {
      summary = me.mismatch->summary;
      culprit_ = {CulpritKind::collective_mismatch, me.mismatch->sentence, me.mismatch->blamed};
    } else {
      culprit_ = {summary.starts_with("message mismatch") ? CulpritKind::message_mismatch
                                                           : CulpritKind::collective_mismatch,
                  summary,
                  {root}};
    }
    failure_pending_ = false;
    abort(RunStatus::mismatch, root, error, std::move(summary), {.preamble = me.error});
  } else {
    const std::string_view error_text = without_rank_prefix(root, me.error);
    culprit_ = {CulpritKind::rank_failure, fmt::format("rank {} failed first: {}", root, error_text), {root}};
    std::string summary = fmt::format("rank {} failed: {}", root, error_text);
    FailureAnalysis analysis = failure_analysis(root);
    failure_pending_ = false;
    abort(RunStatus::rank_failed, root, error, std::move(summary), std::move(analysis));
  }
}

}  // namespace ranklab
