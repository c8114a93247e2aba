// Fault injection: a plan of faults that the fabric applies to a run (DESIGN.md §2), given
// on the command line (`--fault`, repeatable) or in code (ClusterOptions::faults).
//
//   kill:RANK@OPNUM          rank RANK dies instead of posting its operation #OPNUM
//   drop:SRC->DST#N          the N-th message from global rank SRC to DST is lost
//   delay:RANK@OPNUM:STEPS   rank RANK yields STEPS times before posting operation #OPNUM
//                            (STEPS at most 1,000,000)
//   corrupt:SRC->DST#N       the N-th message from SRC to DST arrives with one bit flipped
//
// Numbers count from 0, as the reports' `op #` do; a message is a point-to-point send (with
// a point-to-point --algo, collectives are messages too). A dropped send completes for its
// sender, as it would on a network; its receiver waits, and the deadlock report names the
// message. A corrupted message flips bit 6 of the top byte of its middle element (the
// exponent's high bit of a float), so the receiver's payload hash differs (`ranklab diff`
// against a clean trace shows it) and the value is far off (the gradient check sees it).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "traces/error.hpp"

namespace ranklab {

/// One fault of a plan.
struct FaultSpec {
  enum class Kind : std::uint8_t { kill, drop, delay, corrupt };
  Kind kind = Kind::kill;
  int rank = 0;             ///< kill, delay: the rank; drop, corrupt: the sender (global)
  int dst = 0;              ///< drop, corrupt: the receiver (global)
  std::uint64_t index = 0;  ///< kill, delay: the operation number; drop, corrupt: the message's
  std::uint64_t steps = 0;  ///< delay: how many times the rank yields

  /// Parses the forms above; throws UsageError naming the text and the expected forms.
  static FaultSpec parse(std::string_view text);
  /// The text form that `parse` accepts back.
  std::string to_string() const;

  friend bool operator==(const FaultSpec&, const FaultSpec&) = default;
};

/// The faults of a run. Empty (the default) costs one pointer test per operation.
struct FaultPlan {
  std::vector<FaultSpec> faults;

  bool empty() const { return faults.empty(); }
  /// Throws UsageError if a fault names a rank outside a world of `world_size`.
  void validate(int world_size) const;
};

/// Thrown in a rank that a `kill` fault ends: the run reports it as the root cause (exit 5).
class RankKilledError : public Error {
 public:
  using Error::Error;
};

}  // namespace ranklab
