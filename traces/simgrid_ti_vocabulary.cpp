// SMPI's vocabulary (traces/detail/simgrid_ti_vocabulary.hpp).
#include "traces/detail/simgrid_ti_vocabulary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <utility>

namespace ranklab::detail {

namespace {

using D = DataType;
using S = Signedness;

/// SMPI's datatype table (smpi_datatype.cpp, 3.32), indexed by its id: what one element of
/// each is in ranklab's types, the MPI name, and the signedness of its integers.
constexpr SmpiType kSmpiTypes[] = {
    {{D::f64, 1}, "MPI_DOUBLE", S::none},                 //  0
    {{D::i32, 1}, "MPI_INT", S::is_signed},               //  1
    {{D::u8, 1}, "MPI_CHAR", S::none},                    //  2 (its signedness: the C compiler's)
    {{D::u8, 2}, "MPI_SHORT", S::is_signed},              //  3
    {{D::i64, 1}, "MPI_LONG", S::is_signed},              //  4
    {{D::f32, 1}, "MPI_FLOAT", S::none},                  //  5
    {{D::u8, 1}, "MPI_BYTE", S::none},                    //  6
    {{D::i64, 1}, "MPI_LONG_LONG", S::is_signed},         //  7
    {{D::u8, 1}, "MPI_SIGNED_CHAR", S::is_signed},        //  8
    {{D::u8, 1}, "MPI_UNSIGNED_CHAR", S::is_unsigned},    //  9
    {{D::u8, 2}, "MPI_UNSIGNED_SHORT", S::is_unsigned},   // 10
    {{D::i32, 1}, "MPI_UNSIGNED", S::is_unsigned},        // 11
    {{D::i64, 1}, "MPI_UNSIGNED_LONG", S::is_unsigned},   // 12
    {{D::i64, 1}, "MPI_UNSIGNED_LONG_LONG", S::is_unsigned},  // 13
    {{D::u8, 16}, "MPI_LONG_DOUBLE", S::none},            // 14
    {{D::i32, 1}, "MPI_WCHAR", S::none},                  // 15
    {{D::u8, 1}, "MPI_C_BOOL", S::none},                  // 16
    {{D::u8, 1}, "MPI_INT8_T", S::is_signed},             // 17
    {{D::u8, 2}, "MPI_INT16_T", S::is_signed},            // 18
    {{D::i32, 1}, "MPI_INT32_T", S::is_signed},           // 19
    {{D::i64, 1}, "MPI_INT64_T", S::is_signed},           // 20
    {{D::u8, 1}, "MPI_UINT8_T", S::is_unsigned},          // 21
    {{D::u8, 2}, "MPI_UINT16_T", S::is_unsigned},         // 22
    {{D::i32, 1}, "MPI_UINT32_T", S::is_unsigned},        // 23
    {{D::i64, 1}, "MPI_UINT64_T", S::is_unsigned},        // 24
    {{D::f32, 2}, "MPI_C_FLOAT_COMPLEX", S::none},        // 25
    {{D::f64, 2}, "MPI_C_DOUBLE_COMPLEX", S::none},       // 26
    {{D::u8, 32}, "MPI_C_LONG_DOUBLE_COMPLEX", S::none},  // 27
    {{D::i64, 1}, "MPI_AINT", S::is_signed},              // 28
    {{D::i64, 1}, "MPI_OFFSET", S::is_signed},            // 29
    {{D::u8, 8}, "MPI_FLOAT_INT", S::none},               // 30
    {{D::u8, 16}, "MPI_LONG_INT", S::none},               // 31
    {{D::u8, 16}, "MPI_DOUBLE_INT", S::none},             // 32
    {{D::u8, 8}, "MPI_SHORT_INT", S::none},               // 33
    {{D::i32, 2}, "MPI_2INT", S::none},                   // 34
    {{D::f32, 2}, "MPI_2FLOAT", S::none},                 // 35
    {{D::f64, 2}, "MPI_2DOUBLE", S::none},                // 36
    {{D::i64, 2}, "MPI_2LONG", S::none},                  // 37
    {{D::f32, 1}, "MPI_REAL", S::none},                   // 38
    {{D::f32, 1}, "MPI_REAL4", S::none},                  // 39
    {{D::f64, 1}, "MPI_REAL8", S::none},                  // 40
    {{D::u8, 16}, "MPI_REAL16", S::none},                 // 41
    {{D::f32, 2}, "MPI_COMPLEX8", S::none},               // 42
    {{D::f64, 2}, "MPI_COMPLEX16", S::none},              // 43
    {{D::f64, 2}, "MPI_COMPLEX32", S::none},              // 44
    {{D::i32, 1}, "MPI_INTEGER1", S::is_signed},          // 45
    {{D::u8, 2}, "MPI_INTEGER2", S::is_signed},           // 46
    {{D::i32, 1}, "MPI_INTEGER4", S::is_signed},          // 47
    {{D::i64, 1}, "MPI_INTEGER8", S::is_signed},          // 48
    {{D::u8, 16}, "MPI_INTEGER16", S::is_signed},         // 49
    {{D::u8, 32}, "MPI_LONG_DOUBLE_INT", S::none},        // 50
    {{D::u8, 1}, "MPI_CXX_BOOL", S::none},                // 51
    {{D::f32, 2}, "MPI_CXX_FLOAT_COMPLEX", S::none},      // 52
    {{D::f64, 2}, "MPI_CXX_DOUBLE_COMPLEX", S::none},     // 53
    {{D::u8, 32}, "MPI_CXX_LONG_DOUBLE_COMPLEX", S::none},  // 54
    {{D::u8, 1}, "MPI_UB", S::none},                      // 55 no entry: bytes
    {{D::u8, 1}, "MPI_LB", S::none},                      // 56 no entry: bytes
    {{D::u8, 1}, "MPI_PACKED", S::none},                  // 57
    {{D::u8, 8}, "MPI_PTR", S::none},                     // 58
    {{D::i64, 1}, "MPI_COUNT", S::is_signed},             // 59
};

/// What SMPI writes for a derived datatype: its id is -1, whatever the type.
constexpr SmpiType kDerived{{D::u8, 1}, "a derived datatype", S::none};

/// An id past the table's end (a newer SMPI's type): its elements counted as bytes.
constexpr SmpiType kUnknown{{D::u8, 1}, "", S::none};

const SmpiType& smpi_type_info(std::int64_t id) {
  if (id == kDerivedType) return kDerived;
  if (id < 0 || id >= static_cast<std::int64_t>(std::size(kSmpiTypes))) return kUnknown;
  return kSmpiTypes[id];
}

}  // namespace

ElementType smpi_type(std::int64_t id) { return smpi_type_info(id).element; }

std::string smpi_type_name(std::int64_t id) {
  const std::string_view name = smpi_type_info(id).name;
  return name.empty() ? fmt::format("SMPI datatype {}", id) : std::string(name);
}

std::string_view signedness_clash(std::int64_t sent, std::int64_t received) {
  const Signedness a = smpi_type_info(sent).sign;
  const Signedness b = smpi_type_info(received).sign;
  if (a == S::none || b == S::none || a == b) return {};
  return a == S::is_unsigned ? "unsigned against signed" : "signed against unsigned";
}

bool is_nonblocking_collective(std::string_view name) {
  static constexpr std::string_view kNames[] = {"ibarrier",   "ibcast",     "ireduce",
                                                "iallreduce", "iallgather", "igather",
                                                "iscatter",   "ialltoall",  "ireducescatter"};
  return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

std::string_view refused_action(std::string_view name) {
  static constexpr std::pair<std::string_view, std::string_view> kRefused[] = {
      {"startall", "MPI_Startall: which persistent requests it starts is not recorded"},
      {"cancel",
       "TI does not record whether MPI_Cancel succeeded (the message received or not), which "
       "decides the matching of every later message"},
  };
  for (const auto& [refused, why] : kRefused) {
    if (refused == name) return why;
  }
  return {};
}

}  // namespace ranklab::detail
