#include "collectives/mpi/detail/runtime.hpp"

#include <algorithm>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "collectives/mpi/detail/job_ending.hpp"
#include "collectives/mpi/detail/mpi_call.hpp"
#include "collectives/mpi/mpi_errors.hpp"
#include "comm/errors.hpp"
#include "comm/group.hpp"

namespace ranklab::mpi_detail {
namespace {

Runtime* g_runtime = nullptr;

// FNV-1a: MPI_Comm_create_group's tag must be the same in every process, so no std::hash.
int creation_tag(std::string_view name) {
  std::uint32_t h = 2166136261u;
  for (const char c : name) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  return static_cast<int>(h & 0x3fffffffu);
}

// A copy of `comm` whose errors return instead of aborting the job.
MPI_Comm duplicate(MPI_Comm comm, std::string_view group) {
  MPI_Comm copy = MPI_COMM_NULL;
  check(MPI_Comm_dup(comm, &copy), [&] { return fmt::format("MPI_Comm_dup for group {}", group); });
  MPI_Comm_set_errhandler(copy, MPI_ERRORS_RETURN);
  return copy;
}

}  // namespace

void free_comm(MPI_Comm* comm) noexcept {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (*comm != MPI_COMM_NULL && !finalized) MPI_Comm_free(comm);
  *comm = MPI_COMM_NULL;
}

GroupState::~GroupState() {
  free_comm(&user);
  free_comm(&internal);
  free_comm(&second);
}

StagedCollective::StagedCollective(std::shared_ptr<GroupState> group,
                                   std::unique_ptr<CollectivePlan> plan)
    : group_(std::move(group)), plan_(std::move(plan)) {
  // The second stage's turn is taken now, in call order, whatever happens later.
  if (plan_->second) group_->awaiting_second.push_back(this);
  const int code = plan_->first(/*blocking=*/false, &request_);
  if (code != MPI_SUCCESS) fail(code);
}

StagedCollective::~StagedCollective() {
  auto& queue = group_->awaiting_second;
  queue.erase(std::remove(queue.begin(), queue.end(), this), queue.end());
}

void StagedCollective::fail(int code) noexcept {
  try {
    throw_mpi_error(code, plan_->what);
  } catch (...) {
    error_ = std::current_exception();
  }
  auto& queue = group_->awaiting_second;
  queue.erase(std::remove(queue.begin(), queue.end(), this), queue.end());
  stage_ = Stage::done;
}

void StagedCollective::finish_local() noexcept {
  if (!plan_->local) return;
  try {
    plan_->local();
  } catch (...) {
    error_ = std::current_exception();
  }
}

bool StagedCollective::advance() noexcept {
  int flag = 0;
  if (stage_ == Stage::first) {
    if (const int code = MPI_Test(&request_, &flag, MPI_STATUS_IGNORE); code != MPI_SUCCESS) {
      fail(code);
      return true;
    }
    if (!flag) return false;
    finish_local();
    if (!plan_->second) {
      stage_ = Stage::done;
      return true;
    }
    stage_ = Stage::awaiting_second;
  }
  if (stage_ == Stage::awaiting_second) {
    auto& queue = group_->awaiting_second;
    if (queue.empty() || queue.front() != this) return false;
    queue.pop_front();
    if (const int code = plan_->second(/*blocking=*/false, &request_); code != MPI_SUCCESS) {
      fail(code);
      return true;
    }
    stage_ = Stage::second;
  }
  if (stage_ == Stage::second) {
    if (const int code = MPI_Test(&request_, &flag, MPI_STATUS_IGNORE); code != MPI_SUCCESS) {
      fail(code);
      return true;
    }
    if (flag) stage_ = Stage::done;
  }
  return done();
}

void StagedCollective::rethrow() const {
  if (error_) std::rethrow_exception(error_);
}

Runtime::Runtime() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  RANKLAB_CHECK(initialized, "the MPI backend needs MPI_Init first (MpiSession does it)");
  RANKLAB_CHECK(g_runtime == nullptr, "one MPI session per process");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  groups_comm_ = duplicate(MPI_COMM_WORLD, "world");
  end_comm_ = duplicate(MPI_COMM_WORLD, "world");
  report_comm_ = duplicate(MPI_COMM_WORLD, "world");
  world_ = std::make_shared<GroupState>();
  world_->name = "world";
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  world_->rank = rank;
  for (int r = 0; r < size; ++r) world_->ranks.push_back(r);
  world_->user = duplicate(MPI_COMM_WORLD, "world");
  world_->internal = duplicate(MPI_COMM_WORLD, "world");
  world_->second = duplicate(MPI_COMM_WORLD, "world");
  g_runtime = this;
}

Runtime::~Runtime() {
  staged_.clear();
  groups_.clear();
  world_.reset();
  free_comm(&groups_comm_);
  free_comm(&end_comm_);
  free_comm(&report_comm_);
  g_runtime = nullptr;
}

Runtime& Runtime::instance() {
  RANKLAB_CHECK(g_runtime != nullptr, "no MPI session is open in this process (MpiSession)");
  return *g_runtime;
}

std::shared_ptr<GroupState> Runtime::group(std::string_view kind,
                                           std::span<const int> global_ranks) {
  std::string name = Group::make_name(kind, global_ranks);
  // A group found by name was checked when it was made.
  if (auto it = groups_.find(name); it != groups_.end()) {
    if (recorder_) trace_group(*it->second);
    return it->second;
  }
  Group::check_members(kind, global_ranks, world_size());

  auto state = std::make_shared<GroupState>();
  state->name = name;
  state->ranks.assign(global_ranks.begin(), global_ranks.end());
  const auto me = std::find(state->ranks.begin(), state->ranks.end(), world_rank());
  if (me != state->ranks.end()) {
    state->rank = static_cast<int>(me - state->ranks.begin());
    MPI_Group world_group = MPI_GROUP_NULL;
    MPI_Group members = MPI_GROUP_NULL;
    MPI_Comm_group(groups_comm_, &world_group);
    MPI_Group_incl(world_group, static_cast<int>(state->ranks.size()), state->ranks.data(),
                   &members);
    MPI_Comm created = MPI_COMM_NULL;
    const int code = MPI_Comm_create_group(groups_comm_, members, creation_tag(name), &created);
    MPI_Group_free(&members);
    MPI_Group_free(&world_group);
    check(code, [&] { return fmt::format("new_group {}: MPI_Comm_create_group", name); });
    MPI_Comm_set_errhandler(created, MPI_ERRORS_RETURN);
    state->user = created;
    state->internal = duplicate(created, name);
    state->second = duplicate(created, name);
  }
  groups_.emplace(std::move(name), state);
  // The trace's header lists every group made, as the emulator's does, members or not.
  if (recorder_) trace_group(*state);
  return state;
}

void Runtime::start_recording() {
  RANKLAB_CHECK(idle(), "record_trace with a collective in flight");
  recorder_ = std::make_unique<Recorder>(world_rank());
  next_operation_ = 0;
  // A run starts here: collectives are numbered from 0 again, as on a fresh fabric, so the
  // algorithms' tags (tags.hpp) are the emulator's. Every process does it at the same point.
  world_->trace_index = -1;
  world_->next_sequence = 0;
  for (auto& [name, group] : groups_) {
    group->trace_index = -1;
    group->next_sequence = 0;
  }
  trace_group(*world_);  // the world is group 0 of every trace
}

void Runtime::stop_recording() { recorder_.reset(); }

std::uint32_t Runtime::trace_group(GroupState& group) {
  if (group.trace_index < 0) group.trace_index = recorder_->group_index(group.name, group.ranks);
  return static_cast<std::uint32_t>(group.trace_index);
}

std::shared_ptr<StagedCollective> Runtime::start(const std::shared_ptr<GroupState>& group,
                                                 std::unique_ptr<CollectivePlan> plan) {
  auto staged = std::make_shared<StagedCollective>(group, std::move(plan));
  if (!staged->done()) staged_.push_back(staged);
  return staged;
}

void Runtime::run_blocking(CollectivePlan& plan) {
  check(plan.first(/*blocking=*/true, nullptr), [&] { return plan.what; });
  if (plan.local) plan.local();
  if (plan.second) check(plan.second(/*blocking=*/true, nullptr), [&] { return plan.what; });
}

void Runtime::send_report(int exit_code, const std::string& report) {
  report_.resize(sizeof exit_code + report.size());
  std::memcpy(report_.data(), &exit_code, sizeof exit_code);
  std::memcpy(report_.data() + sizeof exit_code, report.data(), report.size());
  check(MPI_Isend(report_.data(), mpi_count(report_.size(), "a failure report"), MPI_BYTE, 0, 0,
                  report_comm_, &report_request_),
        [] { return std::string("sending the failure report to rank 0"); });
}

bool Runtime::report_sent() {
  int flag = 0;
  return MPI_Test(&report_request_, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS || flag != 0;
}

void Runtime::check_reports() {
  int flag = 0;
  MPI_Status status;
  if (MPI_Iprobe(MPI_ANY_SOURCE, 0, report_comm_, &flag, &status) != MPI_SUCCESS || !flag) return;
  int bytes = 0;
  MPI_Get_count(&status, MPI_BYTE, &bytes);
  std::vector<char> message(static_cast<std::size_t>(bytes));
  check(MPI_Recv(message.data(), bytes, MPI_BYTE, status.MPI_SOURCE, 0, report_comm_,
                 MPI_STATUS_IGNORE),
        [&] { return fmt::format("receiving rank {}'s failure report", status.MPI_SOURCE); });
  int exit_code = 0;
  if (message.size() < sizeof exit_code) {
    throw Error(fmt::format("rank {} sent a failure report of {} bytes", status.MPI_SOURCE, bytes));
  }
  std::memcpy(&exit_code, message.data(), sizeof exit_code);
  throw ReportedFailure(status.MPI_SOURCE, exit_code,
                        decode_report(std::string(message.begin() + sizeof exit_code, message.end())));
}

void Runtime::progress() {
  if (world_->rank == 0) check_reports();
  if (staged_.empty()) return;
  // In call order, so that second stages start in call order within a pass.
  for (const auto& staged : staged_) staged->advance();
  std::erase_if(staged_, [](const auto& staged) { return staged->done(); });
}

bool Runtime::pause_timed_out(std::chrono::steady_clock::time_point start,
                              std::chrono::milliseconds timeout) {
  std::this_thread::sleep_for(kNap);
  return timeout.count() > 0 && std::chrono::steady_clock::now() - start > timeout;
}

void Runtime::throw_timeout(int rank, const std::string& what, std::chrono::milliseconds timeout) {
  throw TimeoutError(fmt::format("rank {} waited more than {} ms in {}", rank, timeout.count(), what));
}

}  // namespace ranklab::mpi_detail
