// SMPI's vocabulary (traces/detail/simgrid_ti_vocabulary.hpp).
#include "traces/detail/simgrid_ti_vocabulary.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

namespace ranklab::detail {

namespace {

using D = DataType;

/// SMPI's datatype table (smpi_datatype.cpp), indexed by its id: what one element of each
/// is in ranklab's types.
constexpr ElementType kSmpiTypes[] = {
    {D::f64, 1},  //  0 double
    {D::i32, 1},  //  1 int
    {D::u8, 1},   //  2 char
    {D::u8, 2},   //  3 short
    {D::i64, 1},  //  4 long
    {D::f32, 1},  //  5 float
    {D::u8, 1},   //  6 byte
    {D::i64, 1},  //  7
    {D::u8, 1},   //  8
    {D::u8, 1},   //  9
    {D::u8, 2},   // 10 16-bit integers
    {D::i32, 1},  // 11
    {D::i64, 1},  // 12
    {D::i64, 1},  // 13
    {D::u8, 16},  // 14
    {D::i32, 1},  // 15 wchar_t
    {D::u8, 1},   // 16
    {D::u8, 1},   // 17
    {D::u8, 2},   // 18 16-bit integers
    {D::i32, 1},  // 19
    {D::i64, 1},  // 20
    {D::u8, 1},   // 21
    {D::u8, 2},   // 22 16-bit integers
    {D::i32, 1},  // 23
    {D::i64, 1},  // 24
    {D::f32, 2},  // 25 pairs of floats
    {D::f64, 2},  // 26 pairs of doubles
    {D::u8, 32},  // 27
    {D::i64, 1},  // 28
    {D::i64, 1},  // 29
    {D::u8, 8},   // 30 float_int
    {D::u8, 16},  // 31
    {D::u8, 16},  // 32
    {D::u8, 8},   // 33 short_int
    {D::i32, 2},  // 34
    {D::f32, 2},  // 35 pairs of floats
    {D::f64, 2},  // 36 pairs of doubles
    {D::i64, 2},  // 37
    {D::f32, 1},  // 38 real
    {D::f32, 1},  // 39 real4
    {D::f64, 1},  // 40 real8
    {D::u8, 16},  // 41
    {D::f32, 2},  // 42 pairs of floats
    {D::f64, 2},  // 43 pairs of doubles
    {D::f64, 2},  // 44 pairs of doubles
    {D::i32, 1},  // 45
    {D::u8, 2},   // 46 16-bit integers
    {D::i32, 1},  // 47
    {D::i64, 1},  // 48
    {D::u8, 16},  // 49
    {D::u8, 32},  // 50
    {D::u8, 1},   // 51
    {D::f32, 2},  // 52 pairs of floats
    {D::f64, 2},  // 53 pairs of doubles
    {D::u8, 32},  // 54
    {D::u8, 1},   // 55 no entry: bytes
    {D::u8, 1},   // 56 no entry: bytes
    {D::u8, 1},   // 57
    {D::u8, 8},   // 58 pointers
    {D::i64, 1},  // 59
};

}  // namespace

ElementType smpi_type(std::int64_t id) {
  if (id < 0 || id >= static_cast<std::int64_t>(std::size(kSmpiTypes))) {
    return {D::u8, 1};  // derived types: bytes
  }
  return kSmpiTypes[id];
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
