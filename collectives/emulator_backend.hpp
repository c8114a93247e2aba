// The Backend over the emulator's fabric: each rank's Communicator calls become its
// RankContext's calls on a Group, and the fabric's Requests complete its Works.
#pragma once

#include <functional>
#include <memory>

#include "collectives/backend.hpp"
#include "collectives/communicator.hpp"

namespace ranklab {

class RankContext;
class Group;

/// The backend of the emulator: `group` of the fabric, as the rank `context` sees it.
std::shared_ptr<Backend> make_emulator_backend(RankContext& context, const Group& group);

/// Runs `program` on the rank's world communicator, whose backend lives in this frame, on
/// the rank's stack, like `context` itself: no heap per rank (104 bytes a million times).
void run_on_world(RankContext& context, Algorithm algorithm,
                  const std::function<void(Communicator&)>& program);

}  // namespace ranklab
