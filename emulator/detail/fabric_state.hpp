// The fabric's private bookkeeping: per rank, per destination mailbox, per collective slot.
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <boost/container/small_vector.hpp>
#include <boost/fiber/condition_variable.hpp>

#include "comm/mismatch_table.hpp"
#include "emulator/detail/call_window.hpp"
#include "emulator/detail/operation.hpp"
#include "emulator/detail/rank_state.hpp"
#include "emulator/detail/rank_wakeup.hpp"
#include "emulator/detail/recent_events.hpp"

namespace ranklab::detail {

/// Unmatched traffic addressed to one rank, each list in posting order (FIFO matching).
struct Mailbox {
  std::vector<std::shared_ptr<Operation>> unexpected;  ///< sends without a receive yet
  std::vector<std::shared_ptr<Operation>> receives;    ///< receives without a send yet
};

/// A rank's numbering of its collective calls on one group.
struct CallCounters {
  /// The next native collective's number: the trace's coll_seq (a replay re-issues only
  /// native calls, so they are numbered on their own).
  std::int64_t collectives = 0;
  /// The next collective call's slot in the group's CallWindow: calls of every algorithm.
  std::uint64_t calls = 0;
};

/// One rank as the fabric sees it.
struct RankSlot {
  RankState state = RankState::running;
  std::uint64_t next_seq = 0;          ///< the next operation's rank_seq
  std::uint64_t lamport = 0;
  SourceSite site;  ///< where the rank's next operations are called from
  const Operation* waiting_on = nullptr;  ///< while blocked
  RankWakeup wakeup;
  std::uint64_t blocks = 0;  ///< indefinite waits so far: tells the watchdog a block from the next
  std::uint64_t watched_block = ~std::uint64_t{0};  ///< the block the watchdog is timing
  std::chrono::steady_clock::time_point watched_since;
  // The two below hold a few numbers inline (the slot lives in the rank's stack page): as
  // vectors they cost a malloc each per rank of a one-collective run (RESULTS.md §3).
  /// The numbers of the rank's next collective on each group, by group id (a rank is in a
  /// few groups): one lookup a post finds both.
  boost::container::small_vector<CallCounters, 2> counters;
  /// rank_seq of operations posted but not yet waited for or released (when tracing): the
  /// next operation's `in_flight`. Touched only by the owner's fiber.
  boost::container::small_vector<std::uint64_t, 2> open;
  /// Compute recorded since the rank's last operation (when tracing): the next operation's
  /// `compute`, or at the rank's end its last one's `compute_after`. Owner's fiber only.
  ComputeWork compute;
  RecentEvents recent;
  /// The rank's latest operation, reused for the next once nobody else holds it
  /// (Fabric::new_operation).
  std::shared_ptr<Operation> spare;
  std::string error;                   ///< what() of the exception that ended the rank
  /// The fabric knows the rank is failing (rank_failed, or a kill fault before it unwinds).
  bool failure_noted = false;
  std::uint64_t failed_at = 0;  ///< the rank's Lamport clock when it failed
  /// The verdict on a collective whose members disagree, where this rank is the first it
  /// blames (its failure is noted while it waits at its post): it ends with the mismatch, the
  /// others cancelled. Null otherwise.
  std::unique_ptr<MismatchVerdict> mismatch;
  /// Polls (test, wait_for, yield) while a failure settles: the progress epoch of the last
  /// poll, and the epoch in which the rank counted as stalled (Fabric::note_poll).
  std::uint64_t poll_epoch = ~std::uint64_t{0};
  std::uint64_t stall_epoch = ~std::uint64_t{0};
  Mailbox mailbox;  ///< traffic addressed to the rank

  /// The rank's counters for group `group_id`, grown (out of line) on its first call there.
  CallCounters& counters_of(std::uint32_t group_id) {
    if (group_id >= counters.size()) [[unlikely]] grow_counters(group_id);
    return counters[group_id];
  }

 private:
  [[gnu::noinline]] void grow_counters(std::uint32_t group_id) { counters.resize(group_id + 1); }
};

struct GroupState {
  CallWindow calls;  ///< collective calls some members have posted
};

/// what() of an exception, or a placeholder for non-standard ones.
std::string describe_exception(const std::exception_ptr& error);

}  // namespace ranklab::detail
