// What a rank is doing, as the fabric and its post-mortem see it.
#pragma once

#include <cstdint>

namespace ranklab::detail {

enum class RankState : std::uint8_t { running, blocked, finished, failed };

}  // namespace ranklab::detail
