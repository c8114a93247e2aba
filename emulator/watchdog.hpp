// The cluster timeout, enforced by one fiber per run rather than by a deadline on every
// blocking wait (bench/RESULTS.md, finding 2). Private to emulator/.
#pragma once

#include <chrono>

#include <boost/fiber/fiber.hpp>

namespace ranklab {

class Fabric;

/// A fiber on the calling cluster worker that runs Fabric::run_watchdog: every few
/// milliseconds, until every rank has ended, it ends any wait longer than `timeout`. It is
/// a fiber, not a thread, so that with one worker the fabric's lock is never taken from
/// another thread (Boost's fiber mutex spins when it is: bench/RESULTS.md, finding 6), and
/// it runs only when the worker picks Boost's own fibers, so it never changes the order in
/// which ranks run. The destructor joins it: it returns once the last rank has ended.
class Watchdog {
 public:
  Watchdog(Fabric& fabric, std::chrono::milliseconds timeout);
  ~Watchdog() { fiber_.join(); }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  boost::fibers::fiber fiber_;
};

}  // namespace ranklab
