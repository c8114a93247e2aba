#include "comm/collective_args.hpp"

#include "comm/errors.hpp"

namespace ranklab {
namespace {

// Checks that `buffer` holds `expected` elements; `what` names it in the message.
void expect_count(OpKind op, const char* what, std::size_t actual, std::size_t expected) {
  RANKLAB_CHECK(actual == expected, "{}: the {} buffer holds {} elements, expected {}",
                to_string(op), what, actual, expected);
}

}  // namespace

CollectiveSignature checked_signature(const CollectiveArgs& args, int group_size,
                                      int group_rank) {
  const OpKind op = args.op;
  RANKLAB_CHECK(!is_point_to_point(op), "{} is not a collective", to_string(op));
  RANKLAB_CHECK(!takes_root(op) || (args.root >= 0 && args.root < group_size),
                "{}: root {} is outside the group of {} ranks", to_string(op), args.root,
                group_size);
  RANKLAB_CHECK(op == OpKind::barrier || args.input.dtype == args.output.dtype,
                "{}: input is {} but output is {}", to_string(op), to_string(args.input.dtype),
                to_string(args.output.dtype));
  RANKLAB_CHECK(
      !takes_reduce_op(op) || !is_bitwise(args.reduce_op) || is_integer(args.input.dtype),
      "{}: {} applies to integer types, not {}", to_string(op), to_string(args.reduce_op),
      to_string(args.input.dtype));
  CollectiveSignature sig = signature_fields(args);
  const auto n = static_cast<std::size_t>(group_size);
  switch (op) {
    case OpKind::barrier:
      sig.count = 0;
      break;
    case OpKind::all_reduce:
    case OpKind::broadcast:
    case OpKind::reduce:
      sig.count = args.input.count;
      expect_count(op, "output", args.output.count, sig.count);
      break;
    case OpKind::all_gather:
    case OpKind::gather:
      sig.count = args.input.count;
      // As in MPI, gather's output matters at the root only; elsewhere it may be empty.
      if (op == OpKind::all_gather || group_rank == args.root || args.output.count != 0) {
        expect_count(op, "output", args.output.count, sig.count * n);
      }
      break;
    case OpKind::reduce_scatter:
    case OpKind::scatter:
      sig.count = args.output.count;
      if (op == OpKind::reduce_scatter || group_rank == args.root || args.input.count != 0) {
        expect_count(op, "input", args.input.count, sig.count * n);
      }
      break;
    case OpKind::all_to_all:
      RANKLAB_CHECK(args.input.count % n == 0,
                    "all_to_all: the input holds {} elements, not a multiple of the group size {}",
                    args.input.count, n);
      sig.count = args.input.count / n;
      expect_count(op, "output", args.output.count, args.input.count);
      break;
    default:
      break;
  }
  return sig;
}

}  // namespace ranklab

namespace ranklab {

std::string describe(const CollectiveSignature& sig) {
  if (sig.op == OpKind::barrier) return "barrier()";
  std::string text = fmt::format("{}(", to_string(sig.op));
  if (sig.has_reduce_op) text += fmt::format("{}, ", to_string(sig.reduce_op));
  text += fmt::format("{}, count={}", to_string(sig.dtype), sig.count);
  if (sig.root != kNoRank) text += fmt::format(", root={}", sig.root);
  return text + ")";
}

}  // namespace ranklab
