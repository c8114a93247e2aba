// The vocabulary shared by the trace format, the fabric and the communicator: element
// types, reduction operators and operation kinds, with their stable text names.
// The names are part of trace format v1 (traces/FORMAT.md): never rename one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ranklab {

/// Element type of a message or collective buffer. bf16 and f16 (bfloat16 and IEEE half,
/// comm/float16.hpp) came with trace format 1.4.
enum class DataType : std::uint8_t { u8, i32, i64, f32, f64, bf16, f16 };

/// Reduction applied by all_reduce, reduce and reduce_scatter. Integer sums and products wrap
/// modulo 2^bits; avg is the sum divided by the member count (integer division for integers).
/// The bitwise and, or and xor (trace format 1.4) apply to integer types only.
enum class ReduceOp : std::uint8_t { sum, prod, min, max, avg, band, bor, bxor };

/// What an operation in the trace was. Point-to-point first, then collectives.
enum class OpKind : std::uint8_t {
  send,
  recv,
  barrier,
  all_reduce,
  broadcast,
  reduce,
  all_gather,
  reduce_scatter,
  gather,
  scatter,
  all_to_all,
};

/// Whether an operation finished, or was still pending when the run ended.
enum class OpStatus : std::uint8_t { completed, pending };

/// Size of one element in bytes.
std::size_t size_of(DataType type);

std::string_view to_string(DataType type);
std::string_view to_string(ReduceOp op);
std::string_view to_string(OpKind kind);
std::string_view to_string(OpStatus status);

/// Parse the text names above; std::nullopt for an unknown name.
std::optional<DataType> parse_data_type(std::string_view name);
std::optional<ReduceOp> parse_reduce_op(std::string_view name);
std::optional<OpKind> parse_op_kind(std::string_view name);
std::optional<OpStatus> parse_op_status(std::string_view name);

/// True for the integer element types (those the bitwise reductions accept).
constexpr bool is_integer(DataType type) {
  return type == DataType::u8 || type == DataType::i32 || type == DataType::i64;
}

/// True for band, bor and bxor.
constexpr bool is_bitwise(ReduceOp op) {
  return op == ReduceOp::band || op == ReduceOp::bor || op == ReduceOp::bxor;
}

/// True for send and recv.
constexpr bool is_point_to_point(OpKind kind) {
  return kind == OpKind::send || kind == OpKind::recv;
}

/// The collectives with a root: broadcast, reduce, gather, scatter.
constexpr bool takes_root(OpKind kind) {
  return kind == OpKind::broadcast || kind == OpKind::reduce || kind == OpKind::gather ||
         kind == OpKind::scatter;
}

/// The collectives that reduce: all_reduce, reduce, reduce_scatter.
constexpr bool takes_reduce_op(OpKind kind) {
  return kind == OpKind::all_reduce || kind == OpKind::reduce || kind == OpKind::reduce_scatter;
}

}  // namespace ranklab
