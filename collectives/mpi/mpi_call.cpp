#include "collectives/mpi/detail/mpi_call.hpp"

#include <climits>

#include <fmt/format.h>

#include "comm/errors.hpp"

namespace ranklab::mpi_detail {

std::string error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return fmt::format("MPI error {}", code);
  return std::string(text, static_cast<std::size_t>(length));
}

void throw_mpi_error(int code, std::string_view what) {
  int error_class = code;
  MPI_Error_class(code, &error_class);
  if (error_class == MPI_ERR_TRUNCATE) {
    throw MismatchError(fmt::format(
        "{}: the message is larger than the receive buffer ({}): the two sides disagree", what,
        error_text(code)));
  }
  throw Error(fmt::format("{}: {}", what, error_text(code)));
}

MPI_Datatype mpi_type(DataType type) {
  switch (type) {
    case DataType::u8: return MPI_UINT8_T;
    case DataType::i32: return MPI_INT32_T;
    case DataType::i64: return MPI_INT64_T;
    case DataType::f32: return MPI_FLOAT;
    case DataType::f64: return MPI_DOUBLE;
  }
  return MPI_BYTE;
}

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::avg: return MPI_SUM;
    case ReduceOp::prod: return MPI_PROD;
    case ReduceOp::min: return MPI_MIN;
    case ReduceOp::max: return MPI_MAX;
  }
  return MPI_SUM;
}

int mpi_count(std::size_t bytes, std::string_view what) {
  if (bytes > static_cast<std::size_t>(INT_MAX)) {
    throw UsageError(fmt::format("{}: {} bytes is more than one MPI message holds ({})", what,
                                 bytes, INT_MAX));
  }
  return static_cast<int>(bytes);
}

}  // namespace ranklab::mpi_detail
