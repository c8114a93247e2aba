// The fabric's fault-injection hooks (faults.hpp). The hot paths test one pointer
// (faults_) or one field (Operation::corrupt) and come here only when a plan is set.
#include "comm/errors.hpp"
#include "emulator/fabric.hpp"

namespace ranklab {

using detail::Operation;

std::string Fabric::where_inside(int rank) const {
  const auto& inside = fingerprints_.inside;
  const auto r = static_cast<std::size_t>(rank);
  if (r >= inside.size() || !inside[r]) return {};
  return fmt::format("inside collective #{} of {}: {}", inside[r]->seq, inside[r]->group->name(),
                     describe(inside[r]->fingerprint));
}

std::int64_t Fabric::next_collective_number(int rank, const Group& group) const {
  const auto& counters = ranks_[static_cast<std::size_t>(rank)]->counters;
  return group.id() < counters.size() ? counters[group.id()].collectives : 0;
}

std::uint64_t Fabric::inject_before_post(int rank,
                                         const std::function<std::string()>& describe) {
  Lock lock(mutex_);
  throw_if_aborted(rank);
  // Only the rank's own fiber advances its operation counter, so this is its next op #.
  const std::uint64_t op = ranks_[static_cast<std::size_t>(rank)]->next_seq;
  const FaultSpec* fault = faults_->at_post(rank, op);
  if (fault == nullptr) return 0;
  const std::string inside = where_inside(rank);
  const std::string call = describe() + (inside.empty() ? "" : ", " + inside);
  if (fault->kind == FaultSpec::Kind::delay) {
    faults_->note_post(*fault, fmt::format("rank {} yielded {} times before its op #{} ({})",
                                           rank, fault->steps, op, call));
    return fault->steps;
  }
  faults_->note_post(*fault, fmt::format("rank {} died instead of posting its op #{} ({})", rank,
                                         op, call));
  RankKilledError killed(fmt::format("killed by fault injection ({}) before its op #{}: {}",
                                     fault->to_string(), op, call));
  // Known now, before the rank unwinds: a Request it drops on the way may wait for a
  // collective, and if the run settles there, the kill is the verdict, not a deadlock.
  note_failure(rank, std::make_exception_ptr(killed));
  throw killed;
}

bool Fabric::inject_on_send(Operation& send) {
  const int dst = send.group->global_rank(send.peer);
  const FaultSpec* fault = faults_->at_send(send.rank, dst);
  if (fault == nullptr) return false;
  if (fault->kind == FaultSpec::Kind::corrupt) {
    send.corrupt = fault;  // applied when it is delivered, to the receiver's copy only
    return false;
  }
  faults_->note_drop(*fault, send, dst);
  complete(send);
  return true;
}

void Fabric::corrupt_delivery(const Operation& send, Operation& recv) {
  recv.hash = faults_->corrupt(*send.corrupt, send, recv);
}

}  // namespace ranklab
