// The Work handles of the MPI backend: one MPI request of a point-to-point message, or a
// staged native collective (detail/runtime.hpp).
#pragma once

#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "collectives/mpi/detail/runtime.hpp"
#include "collectives/mpi/detail/wire_message.hpp"
#include "comm/call_site.hpp"
#include "collectives/work.hpp"

namespace ranklab::mpi_detail {

/// What a point-to-point request is, for its checks, its error messages and its status.
struct MessageInfo {
  bool receive = false;
  DataType dtype = DataType::u8;
  std::size_t count = 0;  ///< elements sent, or the receive buffer's capacity
  int peer = 0;           ///< group rank, or kAnySource
  int tag = 0;            ///< or kAnyTag
  const GroupState* group = nullptr;
  std::chrono::milliseconds timeout{0};  ///< wait() throws TimeoutError after it (0: never)
  std::uint64_t op = 0;    ///< this process's operation number (rank_seq)
  bool recorded = false;   ///< the recorder holds its event (op)
  SourceSite site;         ///< where the program made the call
};

/// An isend or irecv. Destroying an unfinished one waits for a send (MPI reads the caller's
/// buffer until then) and cancels a receive, as the emulator's Request does.
class MessageWork final : public detail::WorkImpl {
 public:
  /// A send of `payload` behind `header`; post it with wire() and request().
  MessageWork(Runtime& runtime, const MessageInfo& info, const WireHeader& header,
              ConstBuffer payload)
      : runtime_(runtime), info_(info), wire_(header, payload) {}
  /// A receive into `payload`.
  MessageWork(Runtime& runtime, const MessageInfo& info, MutableBuffer payload)
      : runtime_(runtime), info_(info), wire_(payload) {}
  ~MessageWork() override;

  WireBuffer& wire() { return wire_; }
  MPI_Request* request() { return &request_; }

  void wait() override;
  bool wait_for(std::chrono::milliseconds timeout) override;
  bool test() override;
  RecvStatus status() const override { return status_; }

  /// "send to rank 3 tag 0 in pp[1,3] (16 x f32), op #2 at FILE:LINE (FUNCTION)": as the
  /// emulator names an operation, the peer as a global rank.
  std::string call() const;
  /// "rank 1: " and call(), for errors.
  std::string describe() const;

 private:
  /// One MPI_Test; true once complete (throws what the operation failed with).
  bool poll();
  void complete(int code, const MPI_Status& status);
  void complete_recv(int code, const MPI_Status& status);
  /// The emulator's line for a received message that does not fit this receive, or empty.
  std::string check_match(const WireHeader& sent, const MPI_Status& status) const;

  /// The owner waited for it or dropped it (the trace's wait points).
  void close();

  Runtime& runtime_;
  MPI_Request request_ = MPI_REQUEST_NULL;
  MessageInfo info_;
  WireBuffer wire_;
  bool done_ = false;
  RecvStatus status_;
};

/// A native collective in flight. Destroying an unfinished one waits for it.
class CollectiveWork final : public detail::WorkImpl {
 public:
  /// `rank_seq`: the call's event when recording (-1 otherwise).
  CollectiveWork(Runtime& runtime, std::shared_ptr<StagedCollective> staged,
                 std::chrono::milliseconds timeout, std::int64_t rank_seq = -1)
      : runtime_(runtime), staged_(std::move(staged)), timeout_(timeout), rank_seq_(rank_seq) {}
  ~CollectiveWork() override;

  void wait() override;
  bool wait_for(std::chrono::milliseconds timeout) override;
  bool test() override;
  RecvStatus status() const override { return {}; }

 private:
  /// Records the completion once it is seen.
  bool finished();

  Runtime& runtime_;
  std::shared_ptr<StagedCollective> staged_;
  std::chrono::milliseconds timeout_;
  std::int64_t rank_seq_;
  bool closed_ = false;
};

}  // namespace ranklab::mpi_detail
