// The Work handles of the MPI backend: one MPI request of a point-to-point message, or a
// staged native collective (detail/runtime.hpp).
#pragma once

#include <mpi.h>

#include <memory>
#include <string>

#include "collectives/mpi/detail/runtime.hpp"
#include "collectives/work.hpp"

namespace ranklab::mpi_detail {

/// What a point-to-point request is, for its error messages and its status.
struct MessageInfo {
  bool receive = false;
  DataType dtype = DataType::u8;
  std::size_t count = 0;  ///< elements sent, or the receive buffer's capacity
  int peer = 0;           ///< group rank, or kAnySource
  int tag = 0;            ///< or kAnyTag
  const GroupState* group = nullptr;
  std::chrono::milliseconds timeout{0};  ///< wait() throws TimeoutError after it (0: never)
};

/// An isend or irecv. Destroying an unfinished one waits for a send (MPI reads the caller's
/// buffer until then) and cancels a receive, as the emulator's Request does.
class MessageWork final : public detail::WorkImpl {
 public:
  MessageWork(Runtime& runtime, MPI_Request request, const MessageInfo& info)
      : runtime_(runtime), request_(request), info_(info) {}
  ~MessageWork() override;

  void wait() override;
  bool wait_for(std::chrono::milliseconds timeout) override;
  bool test() override;
  RecvStatus status() const override { return status_; }

 private:
  /// One MPI_Test; true once complete (throws what the operation failed with).
  bool poll();
  void complete(int code, const MPI_Status& status);
  std::string describe() const;

  Runtime& runtime_;
  MPI_Request request_;
  MessageInfo info_;
  bool done_ = false;
  RecvStatus status_;
};

/// A native collective in flight. Destroying an unfinished one waits for it.
class CollectiveWork final : public detail::WorkImpl {
 public:
  CollectiveWork(Runtime& runtime, std::shared_ptr<StagedCollective> staged,
                 std::chrono::milliseconds timeout)
      : runtime_(runtime), staged_(std::move(staged)), timeout_(timeout) {}
  ~CollectiveWork() override;

  void wait() override;
  bool wait_for(std::chrono::milliseconds timeout) override;
  bool test() override;
  RecvStatus status() const override { return {}; }

 private:
  Runtime& runtime_;
  std::shared_ptr<StagedCollective> staged_;
  std::chrono::milliseconds timeout_;
};

}  // namespace ranklab::mpi_detail
