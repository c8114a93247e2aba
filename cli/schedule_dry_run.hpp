// The schedule validator's dry run on the emulator: the DryRunner that model/'s validator
// takes from above (model/schedule_validator.hpp), so model/ itself knows only the
// Communicator.
#pragma once

#include "model/schedule_validator.hpp"

namespace ranklab::cli {

/// Runs the stages as ranks of a fresh emulator cluster (rendezvous sends, one thread),
/// whose deadlock detection ends a run that cannot progress, and a watchdog bounds the rest.
DryRunner emulator_dry_runner();

}  // namespace ranklab::cli
