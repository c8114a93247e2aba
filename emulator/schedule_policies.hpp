// Every scheduling policy as one row of emulator/options.cpp: its name, the syntax --policy
// and RANKLAB_POLICY take, how to parse and print its arguments, and what --help says of it.
// SchedulePolicy::parse and to_string, and the CLI's choices, help and errors, read the rows;
// what a policy does lives in the scheduler (emulator/scheduler.cpp).
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "emulator/options.hpp"

namespace ranklab {

struct SchedulePolicyRow {
  SchedulePolicy::Kind kind;
  std::string_view name;    ///< "pct"
  std::string_view syntax;  ///< "pct:SEED[:DEPTH]": in --help and the unknown-policy error
  std::string_view help;    ///< a clause of --policy's help; empty: none
  /// Parses what follows "NAME:" (`whole` is the full text, for errors) into `policy`;
  /// false if this row does not take it (the unknown-policy error then). Null: the policy
  /// is its bare name.
  bool (*parse)(std::string_view rest, std::string_view whole, SchedulePolicy& policy);
  /// The text after "NAME:" that parse accepts back; null: the bare name.
  std::string (*print)(const SchedulePolicy& policy);
};

/// Every policy, rank order (the default) first.
std::span<const SchedulePolicyRow> schedule_policies();

}  // namespace ranklab
