// SMPI's vocabulary for the TI importer (traces/simgrid_ti.hpp): its datatype table and
// which actions name what. Private to traces/.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "traces/types.hpp"

namespace ranklab::detail {

/// An element type of SMPI's table (smpi_datatype.cpp): ranklab's type and how many of its
/// elements one SMPI element is.
struct ElementType {
  DataType dtype = DataType::u8;
  std::uint64_t per_element = 1;
};

/// Whether an MPI integer type is signed: none for the types that are not integers, and
/// for MPI_CHAR (whose signedness is the C compiler's).
enum class Signedness : std::uint8_t { none, is_signed, is_unsigned };

/// One entry of SMPI's datatype table: its elements in ranklab's types, its MPI name and
/// its signedness.
struct SmpiType {
  ElementType element;
  std::string_view name;
  Signedness sign = Signedness::none;
};

inline constexpr std::int64_t kDerivedType = -1;  ///< what SMPI writes for a derived datatype

/// SMPI's datatype `id` (0 double, 1 int, ...); ids it has no entry for: bytes.
ElementType smpi_type(std::int64_t id);

/// "MPI_UNSIGNED", "a derived datatype", "SMPI datatype 61" (an id past the table).
std::string smpi_type_name(std::int64_t id);

/// MPI_BYTE and MPI_PACKED, which match a message of any type (as SMPI's own matching has it).
inline bool matches_any_type(std::int64_t id) { return id == 6 || id == 57; }

/// Why a message sent as SMPI type `sent` and received as `received` clashes although
/// ranklab's types cannot tell them apart ("unsigned against signed"), or "": integer types
/// that differ in signedness, MPI_UNSIGNED against MPI_INT.
std::string_view signedness_clash(std::int64_t sent, std::int64_t received);

/// ibarrier, ibcast, ireduce, iallreduce, iallgather, igather, iscatter, ialltoall,
/// ireducescatter: SMPI's names for the nonblocking collectives.
bool is_nonblocking_collective(std::string_view name);

/// Why an action SMPI may write cannot be replayed ("" if it can): TI carries too little
/// for it.
std::string_view refused_action(std::string_view name);

}  // namespace ranklab::detail
