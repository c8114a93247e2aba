#include "emulator/detail/thread_affinity.hpp"

#include <pthread.h>
#include <sched.h>

namespace ranklab::detail {

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (pthread_getaffinity_np(pthread_self(), sizeof set, &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

std::vector<int> worker_cpus(int threads, const std::vector<int>& allowed) {
  if (threads < 2 || static_cast<std::size_t>(threads) > allowed.size()) return {};
  return {allowed.begin(), allowed.begin() + threads};
}

bool pin_current_thread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

}  // namespace ranklab::detail
