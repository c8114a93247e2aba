// SMPI's vocabulary (traces/detail/simgrid_ti_vocabulary.hpp).
#include "traces/detail/simgrid_ti_vocabulary.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

namespace ranklab::detail {

ElementType smpi_type(std::int64_t id) {
  using D = DataType;
  switch (id) {
    case 0:
    case 40:
      return {D::f64, 1};  // double, real8
    case 1:
    case 11:
    case 19:
    case 23:
    case 45:
    case 47:
      return {D::i32, 1};
    case 2:
    case 6:
    case 8:
    case 9:
    case 16:
    case 17:
    case 21:
    case 51:
    case 57:
      return {D::u8, 1};
    case 3:
    case 10:
    case 18:
    case 22:
    case 46:
      return {D::u8, 2};  // 16-bit integers
    case 4:
    case 7:
    case 12:
    case 13:
    case 20:
    case 24:
    case 28:
    case 29:
    case 48:
    case 59:
      return {D::i64, 1};
    case 5:
    case 38:
    case 39:
      return {D::f32, 1};  // float, real, real4
    case 15:
      return {D::i32, 1};  // wchar_t
    case 25:
    case 35:
    case 42:
    case 52:
      return {D::f32, 2};  // pairs of floats
    case 26:
    case 36:
    case 43:
    case 44:
    case 53:
      return {D::f64, 2};
    case 34:
      return {D::i32, 2};
    case 37:
      return {D::i64, 2};
    case 30:
    case 33:
      return {D::u8, 8};  // float_int, short_int
    case 14:
    case 31:
    case 32:
    case 41:
    case 49:
      return {D::u8, 16};
    case 27:
    case 50:
    case 54:
      return {D::u8, 32};
    case 58:
      return {D::u8, 8};  // pointers
    default:
      return {D::u8, 1};  // derived types: bytes
  }
}

bool is_nonblocking_collective(std::string_view name) {
  static constexpr std::string_view kNames[] = {
      "ibarrier", "ibcast",   "ireduce",   "iallreduce",    "iallgather",
      "igather",  "iscatter", "ialltoall", "ireducescatter"};
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
