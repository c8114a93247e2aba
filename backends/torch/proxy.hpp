// One PyTorch process as a rank of the emulator: the fiber that takes the process's calls
// off its connection, one at a time (at decision points: decision_points.hpp), issues each
// on the fabric through the rank's Communicator at the script's own file:line, and answers.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "backends/torch/decision_points.hpp"
#include "backends/torch/wire.hpp"
#include "collectives/communicator.hpp"
#include "comm/errors.hpp"

namespace ranklab::torch_bridge {

/// The process raised, exited with a non-zero status, or died: its rank fails with this.
class ProcessFailedError : public Error {
 public:
  using Error::Error;
};

class ProcessProxy {
 public:
  /// `decisions` hands it its process's calls, at decision points.
  ProcessProxy(Communicator& world, WireConnection& connection, DecisionPoints& decisions);
  ProcessProxy(const ProcessProxy&) = delete;
  ProcessProxy& operator=(const ProcessProxy&) = delete;
  ~ProcessProxy();

  /// Serves the process's calls until it says its script ended. Throws ProcessFailedError
  /// when it failed, and what a call threw (DeadlockError, MismatchError, ...) after
  /// telling the process.
  void serve();
  /// Where the process made its last call ("train.py:42"), or "" before its first.
  std::string last_call() const;
  /// The script's frames at its last call, innermost first: [[file, line, function], ...].
  const nlohmann::json& last_stack() const { return last_stack_; }

 private:
  struct Pending;  // a posted send or receive, by handle

  /// Answers one call; throws what the fabric threw.
  void answer(WireMessage& message);
  /// A collective: answered when done, or, for a call marked "async", posted and answered
  /// with a handle that wait/test complete.
  void collective(const nlohmann::json& header, Communicator& comm,
                  std::span<std::byte> payload);
  /// Runs the call's collective on `comm`: its plain form, or, with `posted`, its i-form
  /// into *posted.
  void issue(const nlohmann::json& header, Communicator& comm, MutableBuffer input,
             MutableBuffer output, Work* posted);
  void post_point_to_point(const nlohmann::json& header, Communicator& comm,
                           std::span<const std::byte> payload);
  void complete(const nlohmann::json& header, bool wait);
  /// Keeps a posted operation until its wait or poll; returns its handle.
  std::int64_t add_pending(std::unique_ptr<Pending> pending);
  /// The call's group: the world, or the new_group of the global ranks it lists.
  Communicator& group_of(const nlohmann::json& header);

  Communicator& world_;
  WireConnection& connection_;
  DecisionPoints& decisions_;
  /// The script's line of the last call, for a report on what the process did after it.
  SourceSite last_site_;
  nlohmann::json last_stack_ = nlohmann::json::array();
  std::map<std::vector<int>, Communicator> groups_;
  std::unordered_map<std::int64_t, std::unique_ptr<Pending>> pending_;
  std::int64_t next_handle_ = 1;
};

}  // namespace ranklab::torch_bridge
