// Latent deadlocks of a run with buffered sends (send mode `eager` or `eager<=BYTES`): the
// sends that completed only because they were buffered, and would deadlock if sends were
// rendezvous, what MUST calls a potential deadlock. Private to emulator/.
//
// "Completed only thanks to buffering" is not "completed before its receive was posted":
// that is how most correct programs run under eager sends, and harmless. It is a cycle that
// rendezvous would close. So this runs, beside the real run, the same program under
// rendezvous semantics, with the real run's matching: each rank's posts and waits, in its
// own order, replayed as the real run makes them, where
// - a post never blocks;
// - a wait for a send completes once the receive that matched it is posted, a wait for a
//   receive once its send is posted (both in the virtual run), a wait for a native
//   collective once every member has posted it;
// - a rank stays at a wait that cannot complete, and posts nothing after it.
// Whenever a rank stops at a wait, or a match tells it whom it waits for, the ranks stopped
// are searched for a cycle through it (each waits for the next one's progress). Such a cycle
// can never resolve: it is a deadlock rendezvous would have, and the buffered sends in it are
// reported with their receives. They are then let through, as buffering did, so the virtual
// run goes on and later, different cycles are found too (a loop's repeats are counted once).
// A buffered send that no receive ever took blocks the virtual run for good: it is reported
// when the run ends.
//
// The virtual run keeps only what it has not yet passed: for a program that needs no
// buffering, a few operations per rank. Operations whose handle was dropped unwaited keep
// a small record until the run ends.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "comm/call_site.hpp"
#include "comm/collective_args.hpp"
#include "emulator/detail/operation.hpp"
#include "comm/run_report.hpp"

namespace ranklab::detail {

class LatentDeadlocks {
 public:
  explicit LatentDeadlocks(int world_size);

  // Hooks, called by the fabric under its lock.
  /// `op` is posted: its kind, group, peer, tag, buffers and (collectives) coll_seq are set,
  /// and it has not yet been matched.
  void posted(const Operation& op);
  /// `send` and `recv` matched; call before the match completes them (a send already done
  /// was buffered).
  void matched(const Operation& send, const Operation& recv);
  /// The owner of `op` waited for it and it completed. A test that found it done is no
  /// wait: under rendezvous it would have found it not done, and the program went another
  /// way, which this cannot know (so a program that polls until a buffered send completes
  /// is not reported).
  void waited(const Operation& op);

  /// After a run that ended ok: a report with status unsafe, culprit `potential-deadlock`
  /// and the details, when buffering hid a deadlock. `describe` names an operation as the
  /// fabric's reports do (with its site).
  void judge(RunReport& report,
             const std::function<std::string(const Operation&)>& describe);

 private:
  /// What the virtual run knows of one operation.
  struct Op {
    OpKind kind = OpKind::send;
    int rank = 0;
    std::uint64_t rank_seq = 0;
    const Group* group = nullptr;
    SourceSite site;
    int peer = kNoRank;  ///< group rank, as Operation::peer
    int tag = 0;
    ConstBuffer data;    ///< count and dtype only (the pointer is never read)
    CollectiveSignature signature;
    std::int64_t coll_seq = kNoCollective;
    bool posted = false;    ///< by the virtual run
    bool wait_queued = false;
    bool buffered = false;  ///< a send that completed before its receive was posted
    bool forced = false;    ///< let through after its cycle was reported
    int partner_rank = kNoRank;  ///< p2p: the other side, once matched
    std::uint64_t partner_seq = 0;
    int waiter = kNoRank;  ///< a rank whose virtual run waits for this one to be posted
  };
  struct Step {
    bool wait = false;  ///< else a post
    std::uint64_t seq = 0;
  };
  /// The virtual posts of a group's k-th native collective.
  struct Slot {
    int posted = 0;
    std::vector<char> member_posted;  ///< by group rank
    std::vector<int> waiters;         ///< global ranks stopped at their wait for it
  };
  /// One reported cycle (or lost message): the stopped operation of each rank on it.
  struct Finding {
    std::vector<Op> stopped;  ///< in cycle order
    std::vector<Op> partners;  ///< the receive (or send) each one waits for; kind recv with
                               ///< rank kNoRank when none took it
    bool lost = false;         ///< a buffered send no receive took
    std::uint64_t repeats = 1;
  };

  Op* find(int rank, std::uint64_t seq);
  /// Runs rank `rank`, and every rank its progress frees, as far as each can go.
  void advance(int rank);
  void run_queue();
  bool can_complete(const Op& op);
  /// Posts `op` virtually: frees the rank that waits for it, counts a collective's member.
  void post(Op& op);
  /// `rank` stopped at `op`: remember what frees it, and look for a cycle through it.
  void stop(int rank, Op& op);
  /// The ranks `rank` (stopped) waits for; empty while it waits for a match.
  std::vector<int> waits_for(int rank);
  /// A cycle of stopped ranks through `rank`, from `rank` (not repeated at the end).
  std::vector<int> cycle_through(int rank);
  void report_cycle(std::vector<int> cycle);
  void record_finding(Finding finding);
  Op partner_of(const Op& op);

  std::vector<std::unordered_map<std::uint64_t, Op>> ops_;  ///< by rank, then rank_seq
  std::vector<std::deque<Step>> steps_;                     ///< by rank: not yet passed
  std::vector<Op*> stopped_;                                ///< by rank: its wait, or null
  std::map<std::pair<std::uint32_t, std::int64_t>, Slot> slots_;
  std::vector<std::int64_t> collectives_done_;  ///< by group id: every coll_seq below is done
  std::vector<int> queue_;                      ///< ranks to advance
  std::vector<std::uint32_t> seen_;             ///< cycle search marks, by rank
  std::uint32_t generation_ = 0;
  std::vector<Finding> findings_;               ///< distinct ones, in the order found
  std::map<std::string, std::size_t> finding_index_;  ///< by the sites they name
  std::uint64_t cycles_ = 0;                    ///< every cycle found, repeats included
};

}  // namespace ranklab::detail
