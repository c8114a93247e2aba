// The data movement of native reductions (emulator/detail/collective_exec.hpp): a reduction
// of a few elements per member (up to kFewElements) takes its own path, which must give the
// block path's bits for every type and operator. The members' values are chosen so that
// any other order of operations gives other bits (floating-point rounding, NaN and signed
// zeros under min and max), so these tests fail if either path changes its order.
#include "emulator/detail/collective_exec.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "comm/float16.hpp"

namespace ranklab::testing {
namespace {

constexpr std::array kOps = {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max,
                             ReduceOp::avg};
constexpr std::array kMemberCounts = {1, 2, 3, 8, 13};
// One more element than the few-element path takes: these counts run the block path.
constexpr std::size_t kBlockCount = detail::kFewElements + 1;

template <typename T>
constexpr bool kIsFloat16 = std::is_same_v<T, BFloat16> || std::is_same_v<T, Float16>;

// The value member `m` contributes at element `e` of chunk `chunk`.
template <typename T>
T value_of(int m, std::size_t chunk, std::size_t e);

// The 16-bit floats take float's values rounded (big overflows IEEE half to infinity).
template <typename T>
  requires kIsFloat16<T>
T value_of(int m, std::size_t chunk, std::size_t e) {
  return static_cast<T>(value_of<float>(m, chunk, e));
}

template <typename T>
T value_of(int m, std::size_t chunk, std::size_t e) {
  const std::size_t k = static_cast<std::size_t>(m) * 7 + chunk * 5 + e * 3;
  if constexpr (std::is_floating_point_v<T>) {
    // big + 1 rounds back to big: sums depend on their order. Products of the others round
    // differently in another order; NaN and the signed zeros make min and max depend on it.
    const T big = 4 / std::numeric_limits<T>::epsilon();
    const std::array<T, 11> table = {big,
                                     T{1},
                                     -big,
                                     static_cast<T>(0.7),
                                     T{3},
                                     -T{0},
                                     T{0},
                                     std::numeric_limits<T>::quiet_NaN(),
                                     T{-2.5},
                                     static_cast<T>(1e-3),
                                     T{1.5}};
    return table[k % table.size()];
  } else {
    return static_cast<T>(k * 2654435761u + 12345);  // wraps: sums and products overflow
  }
}

// a (+ or *) b for the oracle, integers modulo 2^bits (a signed overflow is undefined).
template <typename T, typename Fn>
T wrapped(T a, T b, Fn fn) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(fn(static_cast<U>(a), static_cast<U>(b)));
  } else {
    return fn(a, b);
  }
}

// What the reduction must give at one element: the members' values combined in ascending
// group rank, then avg's division (an oracle independent of the emulator's kernels).
template <typename T>
T expected_of(ReduceOp op, int members, std::size_t chunk, std::size_t e) {
  T acc = value_of<T>(0, chunk, e);
  for (int m = 1; m < members; ++m) {
    const T v = value_of<T>(m, chunk, e);
    switch (op) {
      case ReduceOp::sum:
      case ReduceOp::avg: acc = wrapped<T>(acc, v, std::plus<>{}); break;
      case ReduceOp::prod: acc = wrapped<T>(acc, v, std::multiplies<>{}); break;
      case ReduceOp::min: acc = std::min(acc, v); break;
      case ReduceOp::max: acc = std::max(acc, v); break;
      case ReduceOp::band:
      case ReduceOp::bor:
      case ReduceOp::bxor:
        if constexpr (std::is_integral_v<T>) {
          acc = static_cast<T>(op == ReduceOp::band  ? acc & v
                               : op == ReduceOp::bor ? acc | v
                                                     : acc ^ v);
        } else {
          ADD_FAILURE() << to_string(op) << " on a floating-point type";
        }
        break;
    }
  }
  if (op == ReduceOp::avg) acc = static_cast<T>(acc / static_cast<T>(members));
  return acc;
}

// The members' buffers of one reduction and its operations.
struct Reduction {
  std::vector<std::vector<std::byte>> inputs, outputs;
  std::vector<detail::Operation> storage;
  std::vector<detail::Operation*> ops;
  CollectiveSignature sig;
};

// all_reduce, reduce (root 1 where there is one) or reduce_scatter of `count` elements per
// member (per chunk for reduce_scatter), outputs filled with 0x5a.
template <typename T>
std::unique_ptr<Reduction> make(OpKind kind, ReduceOp op, DataType dtype, int members,
                                std::size_t count) {
  auto r = std::make_unique<Reduction>();
  const std::size_t chunks = kind == OpKind::reduce_scatter ? static_cast<std::size_t>(members) : 1;
  r->sig = {.op = kind, .has_reduce_op = true, .reduce_op = op, .dtype = dtype,
            .root = kind == OpKind::reduce ? std::min(1, members - 1) : kNoRank, .count = count};
  r->storage = std::vector<detail::Operation>(static_cast<std::size_t>(members));
  for (int m = 0; m < members; ++m) {
    std::vector<std::byte> in(chunks * count * sizeof(T));
    for (std::size_t c = 0; c < chunks; ++c) {
      for (std::size_t e = 0; e < count; ++e) {
        const T v = value_of<T>(m, c, e);
        std::memcpy(in.data() + (c * count + e) * sizeof(T), &v, sizeof(T));
      }
    }
    r->inputs.push_back(std::move(in));
    r->outputs.emplace_back(count * sizeof(T), std::byte{0x5a});
  }
  for (int m = 0; m < members; ++m) {
    auto& o = r->storage[static_cast<std::size_t>(m)];
    o.coll_input = r->inputs[static_cast<std::size_t>(m)].data();
    o.coll_output = r->outputs[static_cast<std::size_t>(m)].data();
    r->ops.push_back(&o);
  }
  return r;
}

// Whether member m's output is written (its chunk's reduction), and the chunk it holds.
bool written(const Reduction& r, int m) {
  return r.sig.op != OpKind::reduce || r.sig.root == m;
}
std::size_t chunk_of(const Reduction& r, int m) {
  return r.sig.op == OpKind::reduce_scatter ? static_cast<std::size_t>(m) : 0;
}

template <typename T>
T element(const std::vector<std::byte>& bytes, std::size_t e) {
  T v;
  std::memcpy(&v, bytes.data() + e * sizeof(T), sizeof(T));
  return v;
}

template <typename T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// A value as a failure message prints it (bytes as numbers, 16-bit floats as floats).
template <typename T>
auto printable(T value) {
  if constexpr (kIsFloat16<T>) {
    return static_cast<float>(value);
  } else {
    return +value;
  }
}

// kOps, and the bitwise ones where T is an integer.
template <typename T>
std::vector<ReduceOp> ops_of() {
  std::vector<ReduceOp> ops(kOps.begin(), kOps.end());
  if constexpr (std::is_integral_v<T>) {
    // One at a time: GCC 12 -O3 sees a false out-of-bounds memcpy in insert() of a list
    // (-Werror=array-bounds stopped the build).
    ops.reserve(kOps.size() + 3);
    for (const ReduceOp op : {ReduceOp::band, ReduceOp::bor, ReduceOp::bxor}) ops.push_back(op);
  }
  return ops;
}

template <typename T>
void check_type(OpKind kind, DataType dtype) {
  for (ReduceOp op : ops_of<T>()) {
    for (int members : kMemberCounts) {
      const std::string what = fmt::format("{} {} {} of {} members", to_string(kind),
                                           to_string(op), to_string(dtype), members);
      auto block = make<T>(kind, op, dtype, members, kBlockCount);
      detail::execute_collective(block->sig, block->ops);
      for (std::size_t count = 0; count <= detail::kFewElements; ++count) {
        auto few = make<T>(kind, op, dtype, members, count);
        detail::execute_collective(few->sig, few->ops);
        for (int m = 0; m < members; ++m) {
          const auto& out = few->outputs[static_cast<std::size_t>(m)];
          if (!written(*few, m)) {
            EXPECT_EQ(out, std::vector<std::byte>(out.size(), std::byte{0x5a})) << what;
            continue;
          }
          for (std::size_t e = 0; e < count; ++e) {
            const T got = element<T>(out, e);
            const T from_blocks = element<T>(block->outputs[static_cast<std::size_t>(m)], e);
            const T want = expected_of<T>(op, members, chunk_of(*few, m), e);
            ASSERT_TRUE(same_bits(got, from_blocks))
                << what << ", count " << count << ": member " << m << " element " << e
                << " is " << printable(got) << ", the block path's " << printable(from_blocks);
            ASSERT_TRUE(same_bits(got, want)) << what << ", count " << count << ": member "
                                              << m << " element " << e << " is "
                                              << printable(got) << ", not " << printable(want);
          }
        }
      }
    }
  }
}

void check_every_type(OpKind kind) {
  check_type<std::uint8_t>(kind, DataType::u8);
  check_type<std::int32_t>(kind, DataType::i32);
  check_type<std::int64_t>(kind, DataType::i64);
  check_type<float>(kind, DataType::f32);
  check_type<double>(kind, DataType::f64);
  check_type<BFloat16>(kind, DataType::bf16);
  check_type<Float16>(kind, DataType::f16);
}

//! Every count up to kFewElements (the few-element path) gives, per element, the bits of a
//! count past it (the block path) and of the reduction in ascending group rank.
TEST(CollectiveExecTest, FewElementAllReduceMatchesTheBlockPath) {
  check_every_type(OpKind::all_reduce);
}

TEST(CollectiveExecTest, FewElementReduceMatchesTheBlockPath) {
  check_every_type(OpKind::reduce);
}

TEST(CollectiveExecTest, FewElementReduceScatterMatchesTheBlockPath) {
  check_every_type(OpKind::reduce_scatter);
}

//! Outputs that alias inputs, in place and across members (member m writes where member
//! m+1 reads): each path reads every input before it writes an output, so both give the
//! reduction of the original values.
TEST(CollectiveExecTest, AliasedBuffersAreReadBeforeTheyAreWritten) {
  for (std::size_t count : {std::size_t{1}, std::size_t{3}, detail::kFewElements, kBlockCount}) {
    for (int shift : {0, 1}) {
      const int members = 4;
      auto r = make<float>(OpKind::all_reduce, ReduceOp::sum, DataType::f32, members, count);
      for (int m = 0; m < members; ++m) {
        auto& in = r->inputs[static_cast<std::size_t>((m + shift) % members)];
        r->storage[static_cast<std::size_t>(m)].coll_output = in.data();
      }
      detail::execute_collective(r->sig, r->ops);
      for (const auto& in : r->inputs) {
        for (std::size_t e = 0; e < count; ++e) {
          const float want = expected_of<float>(ReduceOp::sum, members, 0, e);
          EXPECT_TRUE(same_bits(element<float>(in, e), want))
              << "count " << count << ", shift " << shift << ", element " << e;
        }
      }
    }
  }
}

}  // namespace
}  // namespace ranklab::testing
