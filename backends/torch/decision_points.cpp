#include "backends/torch/decision_points.hpp"

#include <poll.h>

#include <fmt/format.h>
#include <boost/fiber/operations.hpp>

#include "comm/errors.hpp"
#include "emulator/scheduler.hpp"

namespace ranklab::torch_bridge {
namespace {

using Clock = std::chrono::steady_clock;

// How long a decision point in a failing run waits for the silent processes before it
// releases them to poll: long enough for a process that is about to call to call.
constexpr std::chrono::milliseconds kFailingGrace{500};

}  // namespace

DecisionPoints::DecisionPoints(std::vector<std::unique_ptr<WireConnection>>& connections,
                               ProcessGroupRunner& processes, std::chrono::milliseconds timeout)
    : connections_(connections),
      processes_(processes),
      timeout_(timeout),
      waiters_(connections.size()) {}

void DecisionPoints::rank_started(Communicator&) {
  if (started_++ != 0) return;
  scheduler_ = RankScheduler::current_rank()->scheduler;
  RankScheduler::set_launching_rank(-1);  // the decider is the worker's own fiber, not a rank
  decider_ = boost::fibers::fiber([this] { decide(); });
}

void DecisionPoints::rank_ended(int, bool failed) {
  some_rank_failed_ = some_rank_failed_ || failed;
  if (++ended_ == static_cast<int>(waiters_.size()) && decider_.joinable()) decider_.join();
}

bool DecisionPoints::failing() const {
  if (some_rank_failed_) return true;
  for (int rank = processes_.first_rank(); rank < processes_.first_rank() + processes_.size();
       ++rank) {
    if (processes_.exited(rank) && processes_.how_it_ended(rank) != "exit status 0") return true;
  }
  return false;
}

WireMessage DecisionPoints::next_frame(Communicator& world, const std::string& last_call) {
  const int rank = world.rank();
  Waiter& me = waiters_[static_cast<std::size_t>(rank)];
  if (me.fresh) me.silent_since = Clock::now();
  me.fresh = false;
  for (;;) {
    me.fiber = boost::fibers::context::active();
    me.release = Release::none;
    ++waiting_;
    RankScheduler::suspend(me.fiber);  // until the decider wakes it
    switch (me.release) {
      case Release::frame:
        me.fresh = true;
        return connections_[static_cast<std::size_t>(rank)]->receive();
      case Release::timeout:
        throw TimeoutError(fmt::format(
            "its process made no call for {} ms (--timeout-ms) {}",
            std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - me.silent_since)
                .count(),
            last_call.empty() ? "after it started" : "after its call at " + last_call));
      case Release::poll:
      case Release::none:
        world.yield();  // a failing run: throws once the failure is declared
        break;
    }
  }
}

void DecisionPoints::decide() {
  while (ended_ < static_cast<int>(waiters_.size())) {
    if (waiting_ == 0 || scheduler_->has_ready_rank()) {
      // Ranks to run, or none waiting for its process (every live rank is blocked on the
      // fabric, which declares that itself): look again later.
      if (waiting_ == 0 && !scheduler_->has_ready_rank()) {
        boost::this_fiber::sleep_for(std::chrono::milliseconds(1));
      } else {
        boost::this_fiber::yield();
      }
      continue;
    }
    wait_for_calls();
    for (Waiter& waiter : waiters_) {  // in rank order: the policy picks among them
      if (waiter.fiber == nullptr) continue;
      boost::fibers::context* fiber = waiter.fiber;
      waiter.fiber = nullptr;
      --waiting_;
      RankScheduler::wake(fiber);
    }
    boost::this_fiber::yield();
  }
}

void DecisionPoints::wait_for_calls() {
  const auto start = Clock::now();
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<std::size_t> ranks;
    for (std::size_t rank = 0; rank < waiters_.size(); ++rank) {
      if (waiters_[rank].fiber == nullptr || waiters_[rank].release != Release::none) continue;
      fds.push_back({connections_[rank]->fd(), POLLIN, 0});
      ranks.push_back(rank);
    }
    if (fds.empty()) return;
    ::poll(fds.data(), fds.size(), 20);
    const auto now = Clock::now();
    bool all_ready = true;
    bool timed_out = false;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      Waiter& waiter = waiters_[ranks[i]];
      if (fds[i].revents != 0) {
        waiter.release = Release::frame;  // kept: the others' calls are still awaited
      } else if (now - waiter.silent_since > timeout_) {
        waiter.release = Release::timeout;
        timed_out = true;
      } else {
        all_ready = false;
      }
    }
    if (all_ready) return;
    if (timed_out || (failing() && now - start > kFailingGrace)) {
      for (std::size_t rank : ranks) {
        if (waiters_[rank].release == Release::none) waiters_[rank].release = Release::poll;
      }
      return;
    }
  }
}

}  // namespace ranklab::torch_bridge
