// The Backend over the emulator's fabric: each rank's Communicator calls become its
// RankContext's calls on a Group, and the fabric's Requests complete its Works.
#pragma once

#include <memory>

#include "collectives/backend.hpp"

namespace ranklab {

class RankContext;
class Group;

/// The backend of the emulator: `group` of the fabric, as the rank `context` sees it.
std::shared_ptr<Backend> make_emulator_backend(RankContext& context, const Group& group);

}  // namespace ranklab
