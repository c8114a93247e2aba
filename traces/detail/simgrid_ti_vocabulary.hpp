// SMPI's vocabulary for the TI importer (traces/simgrid_ti.hpp): its datatype table and
// which actions name what. Private to traces/.
#pragma once

#include <cstdint>
#include <string_view>

#include "traces/types.hpp"

namespace ranklab::detail {

/// An element type of SMPI's table (smpi_datatype.cpp): ranklab's type and how many of its
/// elements one SMPI element is.
struct ElementType {
  DataType dtype = DataType::u8;
  std::uint64_t per_element = 1;
};

/// SMPI's datatype `id` (0 double, 1 int, ...); ids it has no entry for: bytes.
ElementType smpi_type(std::int64_t id);

/// SMPI records point-to-point counts in bytes for the types it cannot replay.
inline bool replayable_p2p_type(std::int64_t id) { return id >= 0 && id <= 6; }

inline constexpr std::int64_t kDerivedType = -1;  ///< what SMPI writes for a derived datatype

/// ibarrier, ibcast, ireduce, iallreduce, iallgather, igather, iscatter, ialltoall,
/// ireducescatter: SMPI's names for the nonblocking collectives.
bool is_nonblocking_collective(std::string_view name);

/// Why an action SMPI may write cannot be replayed ("" if it can): TI carries too little
/// for it.
std::string_view refused_action(std::string_view name);

}  // namespace ranklab::detail
