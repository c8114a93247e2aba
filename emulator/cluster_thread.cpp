// Cluster threads (cluster_thread.hpp).
#include "emulator/cluster_thread.hpp"

#include <pthread.h>

#include <exception>
#include <memory>
#include <semaphore>
#include <thread>

namespace ranklab {
namespace {

thread_local bool on_cluster_thread = false;  // this thread is a ClusterThread's
thread_local bool running_cluster = false;    // ... and runs a cluster's worker now

// Runs `task` as a cluster's worker, so that a cluster it starts goes to another thread.
void run_as_cluster(const std::function<void()>& task) noexcept {
  running_cluster = true;
  task();  // noexcept: a throwing cluster ends the process, as on a std::thread
  running_cluster = false;
}

// One thread and the hand-off of one task at a time to it. Two semaphores rather than a
// mutex and condition variables: a hand-off each way is then one wake-up and one wait in
// the kernel, nothing more (glibc's condition variable took about twice that).
class ClusterThread {
 public:
  ClusterThread() : thread_([this] { serve(); }) {}

  ~ClusterThread() {
    task_ = nullptr;  // nothing to run: the thread returns
    posted_.release();
    thread_.join();
  }

  ClusterThread(const ClusterThread&) = delete;
  ClusterThread& operator=(const ClusterThread&) = delete;

  // Runs `task` there; `is_cluster`: as a cluster's worker (run_as_cluster).
  void run(const std::function<void()>& task, bool is_cluster) {
    task_ = &task;  // published by release(), read after the thread's acquire()
    task_is_cluster_ = is_cluster;
    error_ = nullptr;
    posted_.release();
    done_.acquire();
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void serve() noexcept {
    on_cluster_thread = true;
    for (;;) {
      posted_.acquire();
      if (task_ == nullptr) return;
      if (task_is_cluster_) {
        run_as_cluster(*task_);
      } else {
        try {
          (*task_)();
        } catch (...) {
          error_ = std::current_exception();
        }
      }
      done_.release();
    }
  }

  const std::function<void()>* task_ = nullptr;
  bool task_is_cluster_ = false;
  std::exception_ptr error_;
  std::binary_semaphore posted_{0};
  std::binary_semaphore done_{0};
  std::thread thread_;  // last: started once the rest is set up
};

thread_local std::unique_ptr<ClusterThread> own_cluster_thread;

// In a forked child only the forking thread exists: its cluster thread is gone, and joining
// it would wait forever. Dropped without its destructor; the child starts another.
void forget_cluster_thread_after_fork() noexcept {
  static_cast<void>(own_cluster_thread.release());
}

[[maybe_unused]] const int fork_handler_registered =
    ::pthread_atfork(nullptr, nullptr, forget_cluster_thread_after_fork);

ClusterThread& cluster_thread() {
  if (!own_cluster_thread) own_cluster_thread = std::make_unique<ClusterThread>();
  return *own_cluster_thread;
}

}  // namespace

void run_on_cluster_thread(const std::function<void()>& body) {
  if (on_cluster_thread && !running_cluster) {
    body();
    return;
  }
  cluster_thread().run(body, false);
}

namespace detail {

void run_cluster_on_cluster_thread(const std::function<void()>& cluster) {
  if (on_cluster_thread && !running_cluster) {
    run_as_cluster(cluster);
    return;
  }
  cluster_thread().run(cluster, true);
}

}  // namespace detail

}  // namespace ranklab
