#include "collectives/mpi/detail/mpi_work.hpp"

#include <cstring>
#include <exception>
#include <thread>

#include <fmt/format.h>

#include "collectives/mpi/detail/mpi_call.hpp"
#include "comm/errors.hpp"
#include "traces/hash.hpp"

namespace ranklab::mpi_detail {
namespace {

std::string peer_text(int peer) { return peer == kAnySource ? "any rank" : fmt::format("rank {}", peer); }
std::string tag_text(int tag) {
  if (tag == kAnyTag) return "any tag";
  if (tag >= kFirstReservedTag) return fmt::format("tag {:#x}", tag);
  return fmt::format("tag {}", tag);
}

// Polls `test` until it is true or `timeout` has passed.
template <typename Test>
bool poll_for(Runtime& runtime, std::chrono::milliseconds timeout, Test test) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!test()) {
    runtime.progress();
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

}  // namespace

std::string MessageWork::describe() const {
  return fmt::format("rank {}: {} {} {} in {} ({} x {})", runtime_.world_rank(),
                     info_.receive ? "recv from" : "send to", peer_text(info_.peer),
                     tag_text(info_.tag), info_.group->name, info_.count, to_string(info_.dtype));
}

std::size_t MessageWork::unpack(std::size_t bytes, const MPI_Status& status) {
  if (bytes < kHeaderBytes) {
    throw Error(fmt::format("{}: a message of {} bytes has no trace header: record on every "
                            "process or on none",
                            describe(), bytes));
  }
  MessageHeader header;
  std::memcpy(&header, recording_->staging.data(), kHeaderBytes);
  const std::size_t payload = bytes - kHeaderBytes;
  if (payload > 0) std::memcpy(recording_->user.data, recording_->staging.data() + kHeaderBytes, payload);
  const std::size_t elem = size_of(info_.dtype);
  runtime_.recorder()->complete_recv(
      recording_->rank_seq, info_.group->ranks[static_cast<std::size_t>(status.MPI_SOURCE)],
      status.MPI_TAG, payload / elem,
      payload_hash({recording_->staging.data() + kHeaderBytes, payload}), header);
  return payload;
}

void MessageWork::complete(int code, const MPI_Status& status) {
  done_ = true;
  check(code, [&] { return describe(); });
  if (!info_.receive) {
    if (recording_) runtime_.recorder()->complete(recording_->rank_seq);
    return;
  }
  int received = 0;
  MPI_Get_count(&status, MPI_BYTE, &received);
  std::size_t bytes = static_cast<std::size_t>(received);
  const std::size_t elem = size_of(info_.dtype);
  const std::size_t payload = recording_ ? bytes - std::min(bytes, kHeaderBytes) : bytes;
  if (payload % elem != 0) {
    throw MismatchError(fmt::format("{}: rank {} sent {} bytes, not a whole number of {}",
                                    describe(), status.MPI_SOURCE, payload,
                                    to_string(info_.dtype)));
  }
  if (recording_) bytes = unpack(bytes, status);
  status_ = RecvStatus{.source = status.MPI_SOURCE, .tag = status.MPI_TAG, .count = bytes / elem};
}

bool MessageWork::poll() {
  if (done_) return true;
  int flag = 0;
  MPI_Status status;
  const int code = MPI_Test(&request_, &flag, &status);
  if (code != MPI_SUCCESS || flag) complete(code, status);
  return done_;
}

void MessageWork::close() {
  if (recording_) runtime_.recorder()->close(recording_->rank_seq);
}

void MessageWork::wait() {
  if (done_) return close();
  if (runtime_.idle() && info_.timeout.count() == 0) {
    // Nothing else to advance and no deadline: MPI's own wait is the fastest.
    MPI_Status status;
    const int code = MPI_Wait(&request_, &status);
    close();
    complete(code, status);
    return;
  }
  try {
    runtime_.wait_until([&] { return poll(); }, [&] { return describe(); }, info_.timeout);
  } catch (const TimeoutError&) {
    if (recording_) runtime_.recorder()->mark_blocked(recording_->rank_seq);
    throw;
  }
  close();
}

bool MessageWork::wait_for(std::chrono::milliseconds timeout) {
  if (!poll_for(runtime_, timeout, [&] { return poll(); })) return false;
  close();
  return true;
}

bool MessageWork::test() {
  const bool done = poll();
  if (!done) runtime_.progress();
  return done;
}

MessageWork::~MessageWork() {
  close();
  if (done_) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (info_.receive) {
    MPI_Cancel(&request_);
    MPI_Wait(&request_, MPI_STATUS_IGNORE);
  } else if (std::uncaught_exceptions() > 0) {
    // The run is failing (a timeout): the receiver may never come, so the send is left to
    // MPI (Open MPI cannot cancel sends) and its staging kept until the session ends.
    MPI_Request_free(&request_);
    if (recording_) runtime_.keep_until_end(std::move(recording_->staging));
  } else {
    // MPI reads the caller's buffer until the send completes.
    MPI_Wait(&request_, MPI_STATUS_IGNORE);
  }
}

bool CollectiveWork::finished() {
  if (!staged_->done()) return false;
  if (rank_seq_ >= 0 && !closed_) runtime_.recorder()->complete(static_cast<std::uint64_t>(rank_seq_));
  return true;
}

void CollectiveWork::wait() {
  try {
    runtime_.wait_until(
        [&] { return finished(); },
        [&] { return fmt::format("rank {}: {}", runtime_.world_rank(), staged_->what()); },
        timeout_);
  } catch (const TimeoutError&) {
    if (rank_seq_ >= 0) runtime_.recorder()->mark_blocked(static_cast<std::uint64_t>(rank_seq_));
    throw;
  }
  if (rank_seq_ >= 0 && !closed_) runtime_.recorder()->close(static_cast<std::uint64_t>(rank_seq_));
  closed_ = true;
  staged_->rethrow();
}

bool CollectiveWork::wait_for(std::chrono::milliseconds timeout) {
  if (!poll_for(runtime_, timeout, [&] { return finished(); })) return false;
  wait();
  return true;
}

bool CollectiveWork::test() {
  runtime_.progress();
  if (!finished()) return false;
  staged_->rethrow();
  return true;
}

CollectiveWork::~CollectiveWork() {
  // Unwinding from a failed wait (a timeout): waiting again would only time out again.
  if (closed_ || std::uncaught_exceptions() > 0) return;
  try {
    wait();
  } catch (...) {
    // The run is failing already; the error has been or will be reported by a wait.
  }
}

}  // namespace ranklab::mpi_detail
