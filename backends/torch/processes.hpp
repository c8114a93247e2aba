// The PyTorch processes `ranklab torchrun` starts: one per rank, with the variables torchrun
// sets, their output forwarded line by line with a `[rankN]:` prefix (as torchrun's --tee
// does) or kept in per-rank files, and reaped when the job ends.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace ranklab::torch_bridge {

struct ProcessSpec {
  std::vector<std::string> argv;             ///< the interpreter and its arguments
  std::map<std::string, std::string> env;    ///< set on top of this process's environment
};

/// The processes of one job that run on this machine (ranks first_rank ... first_rank +
/// size - 1 of the world; every method takes global ranks). Not thread-safe: one thread asks
/// at a time.
class ProcessGroupRunner {
 public:
  /// Starts one process per spec. `log_dir` empty: each line of their output goes to
  /// stderr as `[rankN]: line`; otherwise to LOG_DIR/rankN/{stdout,stderr}.log, which must
  /// not exist yet (ranklab never overwrites a file it did not create). Throws Error.
  ProcessGroupRunner(const std::vector<ProcessSpec>& specs, const std::string& log_dir,
                     int first_rank = 0);
  /// Ends what is still running (SIGKILL) and joins the output thread.
  ~ProcessGroupRunner();
  ProcessGroupRunner(const ProcessGroupRunner&) = delete;
  ProcessGroupRunner& operator=(const ProcessGroupRunner&) = delete;

  int size() const { return static_cast<int>(pids_.size()); }
  int first_rank() const { return first_rank_; }
  /// Whether `rank`'s process runs here (not on another node).
  bool runs(int rank) const { return rank >= first_rank_ && rank < first_rank_ + size(); }
  int pid(int rank) const { return pids_[local(rank)]; }
  /// Whether `rank`'s process has ended, without waiting.
  bool exited(int rank);
  /// "exit status 1", "killed by signal 9"; empty while it runs.
  std::string how_it_ended(int rank);
  /// Waits up to `grace_ms` for every process to end, then kills the rest; the output is
  /// forwarded to its end. Returns the ranks that had to be killed.
  std::vector<int> finish(int grace_ms);

 private:
  void forward_output();  // the output thread
  std::size_t local(int rank) const { return static_cast<std::size_t>(rank - first_rank_); }

  int first_rank_ = 0;
  std::vector<int> pids_;
  std::vector<std::optional<int>> statuses_;  ///< waitpid's status once reaped
  struct Stream {
    int fd;
    int rank;
    int file;  ///< -1: to stderr with the prefix
    std::string partial;
  };
  std::vector<Stream> streams_;
  std::thread output_;
};

}  // namespace ranklab::torch_bridge
