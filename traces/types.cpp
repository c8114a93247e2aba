#include "traces/types.hpp"

#include <array>

namespace ranklab {
namespace {

// One table per enum, indexed by the enumerator, so a name and its parse stay in sync.
constexpr std::array<std::string_view, 5> kDataTypeNames = {"u8", "i32", "i64", "f32", "f64"};
constexpr std::array<std::size_t, 5> kDataTypeSizes = {1, 4, 8, 4, 8};
constexpr std::array<std::string_view, 5> kReduceOpNames = {"sum", "prod", "min", "max", "avg"};
constexpr std::array<std::string_view, 11> kOpKindNames = {
    "send",       "recv",           "barrier", "all_reduce", "broadcast", "reduce",
    "all_gather", "reduce_scatter", "gather",  "scatter",    "all_to_all"};
constexpr std::array<std::string_view, 2> kOpStatusNames = {"completed", "pending"};

template <typename Enum, std::size_t N>
std::optional<Enum> parse_by_name(const std::array<std::string_view, N>& names,
                                  std::string_view name) {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == name) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

}  // namespace

std::size_t size_of(DataType type) { return kDataTypeSizes[static_cast<std::size_t>(type)]; }

std::string_view to_string(DataType type) { return kDataTypeNames[static_cast<std::size_t>(type)]; }
std::string_view to_string(ReduceOp op) { return kReduceOpNames[static_cast<std::size_t>(op)]; }
std::string_view to_string(OpKind kind) { return kOpKindNames[static_cast<std::size_t>(kind)]; }
std::string_view to_string(OpStatus status) { return kOpStatusNames[static_cast<std::size_t>(status)]; }

std::optional<DataType> parse_data_type(std::string_view name) {
  return parse_by_name<DataType>(kDataTypeNames, name);
}
std::optional<ReduceOp> parse_reduce_op(std::string_view name) {
  return parse_by_name<ReduceOp>(kReduceOpNames, name);
}
std::optional<OpKind> parse_op_kind(std::string_view name) {
  return parse_by_name<OpKind>(kOpKindNames, name);
}
std::optional<OpStatus> parse_op_status(std::string_view name) {
  return parse_by_name<OpStatus>(kOpStatusNames, name);
}

}  // namespace ranklab
