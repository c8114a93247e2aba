#include "collectives/mpi/detail/mpi_call.hpp"

#include <array>
#include <climits>
#include <stdexcept>

#include <fmt/format.h>

#include "comm/errors.hpp"
#include "comm/reduce_kernel.hpp"

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
    // MPI has no 16-bit floats: their bits travel as 16-bit integers, and their reductions
    // are ranklab's own kernels (mpi_op).
    case DataType::bf16:
    case DataType::f16: return MPI_UINT16_T;
  }
  return MPI_BYTE;
}

namespace {

// An MPI user operator applying ranklab's kernel for (Type, Op): inout = inout Op in.
template <DataType Type, ReduceOp Op>
void apply_ranklab_kernel(void* in, void* inout, int* length, MPI_Datatype* /*type*/) {
  reduce_into(inout, in, static_cast<std::size_t>(*length), Type, Op);
}

template <DataType Type>
MPI_Op ranklab_kernel_op(ReduceOp op) {
  // Created once per process on first use (MPI is initialized by then) and kept until
  // MPI_Finalize frees it; every operator these types take is commutative.
  static const std::array<MPI_Op, 4> ops = [] {
    const auto create = [](MPI_User_function* apply) {
      MPI_Op created = MPI_OP_NULL;
      check(MPI_Op_create(apply, 1, &created), [] { return "MPI_Op_create"; });
      return created;
    };
    return std::array<MPI_Op, 4>{create(apply_ranklab_kernel<Type, ReduceOp::sum>),
                                 create(apply_ranklab_kernel<Type, ReduceOp::prod>),
                                 create(apply_ranklab_kernel<Type, ReduceOp::min>),
                                 create(apply_ranklab_kernel<Type, ReduceOp::max>)};
  }();
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::avg: return ops[0];
    case ReduceOp::prod: return ops[1];
    case ReduceOp::min: return ops[2];
    case ReduceOp::max: return ops[3];
    default:
      throw std::logic_error("ranklab: a bitwise reduction reached a floating-point MPI operator");
  }
}

}  // namespace

MPI_Op mpi_op(ReduceOp op, DataType type) {
  if (type == DataType::bf16) return ranklab_kernel_op<DataType::bf16>(op);
  if (type == DataType::f16) return ranklab_kernel_op<DataType::f16>(op);
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::avg: return MPI_SUM;
    case ReduceOp::prod: return MPI_PROD;
    case ReduceOp::min: return MPI_MIN;
    case ReduceOp::max: return MPI_MAX;
    case ReduceOp::band: return MPI_BAND;
    case ReduceOp::bor: return MPI_BOR;
    case ReduceOp::bxor: return MPI_BXOR;
  }
  return MPI_SUM;
}

int mpi_count(std::size_t bytes, std::string_view what) {
  if (bytes > static_cast<std::size_t>(INT_MAX)) {
    throw UsageError(
        fmt::format("{}: {} bytes is more than one MPI message holds ({})", what, bytes, INT_MAX));
  }
  return static_cast<int>(bytes);
}

}  // namespace ranklab::mpi_detail
