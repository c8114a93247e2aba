// When the bridge lets the fabric decide (DESIGN.md §9): only when every live process is
// inside a call. A rank's fiber that needs its process's next call is suspended; once no
// rank of the worker can run (each waits for its process or is blocked on the fabric),
// the decider, a fiber of the worker's own, waits in the kernel until every one of those
// processes has sent its call, then wakes them all in rank order and the policy picks
// among them. So the fabric sees the same calls in the same order whatever the OS does
// with the processes: a process that computes longer or a kernel that schedules it later
// changes when a decision is made, never which.
//
// Outside that promise, and only where the job would otherwise never end: a process silent
// past the timeout, and, once a rank has failed, processes stuck outside any call (in
// torch's own store, waiting for the dead one), which are released to poll the fabric so
// that the failure can be declared.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <boost/fiber/fiber.hpp>

#include "backends/torch/processes.hpp"
#include "backends/torch/wire.hpp"
#include "collectives/communicator.hpp"

namespace boost::fibers {
class context;
}

namespace ranklab {
class RankScheduler;
}

namespace ranklab::torch_bridge {

class DecisionPoints {
 public:
  DecisionPoints(std::vector<std::unique_ptr<WireConnection>>& connections,
                 ProcessGroupRunner& processes, std::chrono::milliseconds timeout);
  DecisionPoints(const DecisionPoints&) = delete;
  DecisionPoints& operator=(const DecisionPoints&) = delete;

  /// Rank `world.rank()`'s fiber, when it starts serving its process (the first one starts
  /// the decider) and when it has ended, `failed` or not (the last one joins the decider).
  void rank_started(Communicator& world);
  void rank_ended(int rank, bool failed);

  /// The process's next call, at a decision point. Throws TimeoutError when the process
  /// stays silent past the timeout (naming `last_call`, where it last called), and what
  /// the fabric throws into a rank released to poll a failing run.
  WireMessage next_frame(Communicator& world, const std::string& last_call);

 private:
  enum class Release { none, frame, timeout, poll };
  struct Waiter {
    boost::fibers::context* fiber = nullptr;  ///< set while it waits
    Release release = Release::none;
    std::chrono::steady_clock::time_point silent_since;
    bool fresh = true;  ///< its last wait ended with a frame: the next starts the clock
  };

  void decide();  // the decider's body
  /// Blocks until every waiting rank's process has sent its call (or ended), then marks
  /// each waiter's release.
  void wait_for_calls();
  bool failing() const;

  std::vector<std::unique_ptr<WireConnection>>& connections_;
  ProcessGroupRunner& processes_;
  std::chrono::milliseconds timeout_;
  std::vector<Waiter> waiters_;
  int waiting_ = 0;
  int started_ = 0;
  int ended_ = 0;
  bool some_rank_failed_ = false;
  RankScheduler* scheduler_ = nullptr;
  boost::fibers::fiber decider_;
};

}  // namespace ranklab::torch_bridge
