#include "collectives/mpi/detail/mpi_work.hpp"

#include <thread>

#include <fmt/format.h>

#include "collectives/mpi/detail/mpi_call.hpp"
#include "emulator/errors.hpp"

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

void MessageWork::complete(int code, const MPI_Status& status) {
  done_ = true;
  check(code, [&] { return describe(); });
  if (!info_.receive) return;
  int bytes = 0;
  MPI_Get_count(&status, MPI_BYTE, &bytes);
  const std::size_t elem = size_of(info_.dtype);
  if (static_cast<std::size_t>(bytes) % elem != 0) {
    throw MismatchError(fmt::format("{}: rank {} sent {} bytes, not a whole number of {}",
                                    describe(), status.MPI_SOURCE, bytes,
                                    to_string(info_.dtype)));
  }
  status_ = RecvStatus{.source = status.MPI_SOURCE,
                       .tag = status.MPI_TAG,
                       .count = static_cast<std::size_t>(bytes) / elem};
}

bool MessageWork::poll() {
  if (done_) return true;
  int flag = 0;
  MPI_Status status;
  const int code = MPI_Test(&request_, &flag, &status);
  if (code != MPI_SUCCESS || flag) complete(code, status);
  return done_;
}

void MessageWork::wait() {
  if (done_) return;
  if (runtime_.idle() && info_.timeout.count() == 0) {
    // Nothing else to advance and no deadline: MPI's own wait is the fastest.
    MPI_Status status;
    const int code = MPI_Wait(&request_, &status);
    complete(code, status);
    return;
  }
  runtime_.wait_until([&] { return poll(); }, [&] { return describe(); }, info_.timeout);
}

bool MessageWork::wait_for(std::chrono::milliseconds timeout) {
  return poll_for(runtime_, timeout, [&] { return poll(); });
}

bool MessageWork::test() {
  const bool done = poll();
  if (!done) runtime_.progress();
  return done;
}

MessageWork::~MessageWork() {
  if (done_) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (info_.receive) MPI_Cancel(&request_);
  MPI_Wait(&request_, MPI_STATUS_IGNORE);
}

void CollectiveWork::wait() {
  runtime_.wait_until(
      [&] { return staged_->done(); },
      [&] { return fmt::format("rank {}: {}", runtime_.world_rank(), staged_->what()); },
      timeout_);
  staged_->rethrow();
}

bool CollectiveWork::wait_for(std::chrono::milliseconds timeout) {
  if (!poll_for(runtime_, timeout, [&] { return staged_->done(); })) return false;
  staged_->rethrow();
  return true;
}

bool CollectiveWork::test() {
  runtime_.progress();
  if (!staged_->done()) return false;
  staged_->rethrow();
  return true;
}

CollectiveWork::~CollectiveWork() {
  if (staged_->done()) return;
  try {
    wait();
  } catch (...) {
    // The run is failing already; the error has been or will be reported by a wait.
  }
}

}  // namespace ranklab::mpi_detail
