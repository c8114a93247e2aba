#include "traces/types.hpp"

#include <array>

#include "traces/enum_names.hpp"

namespace ranklab {
namespace {

// One table per enum (traces/enum_names.hpp).
constexpr EnumNames<DataType, 7> kDataTypeNames({"u8", "i32", "i64", "f32", "f64", "bf16", "f16"});
constexpr std::array<std::size_t, 7> kDataTypeSizes = {1, 4, 8, 4, 8, 2, 2};
constexpr EnumNames<ReduceOp, 8> kReduceOpNames({"sum", "prod", "min", "max", "avg", "band", "bor",
                                                 "bxor"});
constexpr EnumNames<OpKind, 11> kOpKindNames({"send", "recv", "barrier", "all_reduce", "broadcast",
                                              "reduce", "all_gather", "reduce_scatter", "gather",
                                              "scatter", "all_to_all"});
constexpr EnumNames<OpStatus, 2> kOpStatusNames({"completed", "pending"});

}  // namespace

std::size_t size_of(DataType type) { return kDataTypeSizes[static_cast<std::size_t>(type)]; }

std::string_view to_string(DataType type) { return kDataTypeNames[type]; }
std::string_view to_string(ReduceOp op) { return kReduceOpNames[op]; }
std::string_view to_string(OpKind kind) { return kOpKindNames[kind]; }
std::string_view to_string(OpStatus status) { return kOpStatusNames[status]; }

std::optional<DataType> parse_data_type(std::string_view name) {
  return kDataTypeNames.parse(name);
}
std::optional<ReduceOp> parse_reduce_op(std::string_view name) {
  return kReduceOpNames.parse(name);
}
std::optional<OpKind> parse_op_kind(std::string_view name) { return kOpKindNames.parse(name); }
std::optional<OpStatus> parse_op_status(std::string_view name) {
  return kOpStatusNames.parse(name);
}

}  // namespace ranklab
