#include "collectives/mpi/detail/mpi_work.hpp"

#include <cstring>
#include <exception>

#include <fmt/format.h>

#include "collectives/mpi/detail/mpi_call.hpp"
#include "comm/errors.hpp"
#include "comm/message_mismatch.hpp"
#include "traces/event_text.hpp"
#include "traces/hash.hpp"

namespace ranklab::mpi_detail {
namespace {

// The peer as every report names it: its global rank.
std::string peer_text(const GroupState& group, int peer) {
  if (peer == kAnySource) return "any source";
  return fmt::format("rank {}", group.ranks[static_cast<std::size_t>(peer)]);
}
std::string tag_text(int tag) {
  if (tag == kAnyTag) return "tag any";
  if (tag >= kFirstReservedTag) return fmt::format("tag {:#x}", tag);
  return fmt::format("tag {}", tag);
}

// Polls `test` until it is true or `timeout` has passed, as every wait polls.
template <typename Test>
bool poll_for(Runtime& runtime, std::chrono::milliseconds timeout, Test test) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool done = false;
  runtime.wait_until(
      [&] { return (done = test()) || std::chrono::steady_clock::now() >= deadline; },
      [] { return std::string(); }, std::chrono::milliseconds(0));
  return done;
}

}  // namespace

std::string MessageWork::call() const {
  return fmt::format("{} {} {} in {} ({} x {}), op #{}{}", info_.receive ? "recv from" : "send to",
                     peer_text(*info_.group, info_.peer), tag_text(info_.tag), info_.group->name,
                     info_.count, to_string(info_.dtype), info_.op,
                     describe_site(to_call_site(info_.site)));
}

std::string MessageWork::describe() const {
  return fmt::format("rank {}: {}", runtime_.world_rank(), call());
}

std::string MessageWork::check_match(const WireHeader& sent, const MPI_Status& status) const {
  const GroupState& group = *info_.group;
  const auto global = [&](int group_rank) { return group.ranks[static_cast<std::size_t>(group_rank)]; };
  const MessageSide send{global(status.MPI_SOURCE), sent.message.sender_seq,
                         static_cast<std::size_t>(sent.count), static_cast<DataType>(sent.dtype)};
  const MessageSide recv{runtime_.world_rank(), info_.op, info_.count, info_.dtype};
  const char* reason = message_mismatch_reason(send, recv);
  if (reason == nullptr) return {};
  return describe_message_mismatch(group.name, send, status.MPI_TAG, recv,
                                   info_.peer == kAnySource ? kAnySource : global(info_.peer),
                                   info_.tag, reason);
}

void MessageWork::complete_recv(int code, const MPI_Status& status) {
  // A truncated message still brings its header (Open MPI delivers what fits), so a buffer
  // too small is reported with both sides, as the emulator reports it.
  int error_class = MPI_SUCCESS;
  if (code != MPI_SUCCESS) MPI_Error_class(code, &error_class);
  if (code != MPI_SUCCESS && error_class != MPI_ERR_TRUNCATE) throw_mpi_error(code, describe());
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  const std::size_t received = static_cast<std::size_t>(std::max(count, 0));
  const WireHeader* sent = wire_.received_header(received);
  if (sent == nullptr) {
    throw Error(fmt::format("{}: a message of {} bytes without ranklab's header: every process "
                            "of the job sends through ranklab's MPI backend",
                            describe(), received));
  }
  if (std::string mismatch = check_match(*sent, status); !mismatch.empty()) {
    throw MismatchError(std::move(mismatch));
  }
  check(code, [&] { return describe(); });
  const std::span<const std::byte> payload = wire_.finish_recv(received);
  if (info_.recorded) {
    const int source = info_.group->ranks[static_cast<std::size_t>(status.MPI_SOURCE)];
    runtime_.recorder()->complete_recv(info_.op, source, status.MPI_TAG, sent->count,
                                       payload_hash(payload), sent->message);
  }
  status_ = RecvStatus{.source = status.MPI_SOURCE, .tag = status.MPI_TAG,
                       .count = static_cast<std::size_t>(sent->count)};
}

void MessageWork::complete(int code, const MPI_Status& status) {
  done_ = true;
  if (info_.receive) return complete_recv(code, status);
  check(code, [&] { return describe(); });
  if (info_.recorded) runtime_.recorder()->complete(info_.op);
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
  if (info_.recorded) runtime_.recorder()->close(info_.op);
}

void MessageWork::wait() {
  if (done_) return close();
  try {
    runtime_.wait_until([&] { return poll(); }, [&] { return call(); }, info_.timeout);
  } catch (const TimeoutError&) {
    if (info_.recorded) runtime_.recorder()->mark_blocked(info_.op);
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
  if (done_ || request_ == MPI_REQUEST_NULL) return;
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
    runtime_.keep_until_end(wire_.release_staging());
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
        [&] { return staged_->what(); },
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
