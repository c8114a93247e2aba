#include "emulator/watchdog.hpp"

#include <algorithm>

#include "emulator/fabric.hpp"
#include "emulator/scheduler.hpp"

namespace ranklab {

Watchdog::Watchdog(Fabric& fabric, std::chrono::milliseconds timeout) {
  // A hang is reported between `timeout` and `timeout` + 2 ticks after it began; the scan
  // takes the fabric lock once per tick, so ticks stay coarse.
  const auto tick = std::clamp(timeout / 8, std::chrono::milliseconds(1),
                               std::chrono::milliseconds(100));
  RankScheduler::set_launching_rank(-1);  // one of the worker's own fibers, not a rank
  fiber_ = boost::fibers::fiber([&fabric, tick] { fabric.run_watchdog(tick); });
}

}  // namespace ranklab
