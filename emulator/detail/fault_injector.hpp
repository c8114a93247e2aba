// The fabric's side of fault injection (emulator/faults.hpp): which fault fires when, and
// what each did, for the report. Private to emulator/; the fabric calls it only when the
// run has a plan, and always under its lock.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "comm/buffer.hpp"
#include "emulator/faults.hpp"
#include "comm/group.hpp"

namespace ranklab::detail {

struct Operation;

/// A message a `drop` fault removed, kept to name it in the deadlock report.
struct DroppedMessage {
  const Group* group = nullptr;
  int src = 0;  ///< global ranks
  int dst = 0;
  int tag = 0;
  std::size_t count = 0;
  DataType dtype = DataType::u8;
  std::uint64_t send_seq = 0;  ///< the sender's op #
  std::string fault;           ///< "drop:0->1#0"
};

class FaultInjector {
 public:
  FaultInjector(const FaultPlan& plan, int world_size);

  /// The kill or delay fault of `rank` at its operation `op` that has not fired, or null.
  const FaultSpec* at_post(int rank, std::uint64_t op);
  /// Records what a kill or delay did (`what`: the operation, and where the rank was).
  void note_post(const FaultSpec& fault, std::string what);

  /// Counts a message from `src` to `dst` (global ranks): the drop or corrupt fault that
  /// hits it (marked fired), or null.
  const FaultSpec* at_send(int src, int dst);
  /// `send` (to global rank `dst`) was dropped by `fault`.
  void note_drop(const FaultSpec& fault, const Operation& send, int dst);
  /// Flips the bit (faults.hpp) in what `recv` received from `send`, which `fault` hit;
  /// returns the received payload's new hash.
  std::uint64_t corrupt(const FaultSpec& fault, const Operation& send, const Operation& recv);

  const std::vector<DroppedMessage>& dropped() const { return dropped_; }
  /// One line per fault of the plan, in plan order: what it did, or that it never fired
  /// (`posted[r]`: how many operations rank r posted).
  std::vector<std::string> notes(const std::vector<std::uint64_t>& posted) const;

 private:
  struct Entry {
    FaultSpec spec;
    std::string what;  ///< empty until it fires
  };
  Entry& entry_of(const FaultSpec& fault);

  std::vector<Entry> entries_;
  std::vector<std::vector<std::size_t>> post_faults_;  ///< by rank: entries_ indices
  std::unordered_map<std::uint64_t, std::uint64_t> sent_;  ///< (src, dst) -> messages so far
  std::vector<DroppedMessage> dropped_;
};

}  // namespace ranklab::detail
