// Shared machinery of the collective test grid: parameters and their names, typed dispatch,
// input patterns, and the naive reference every algorithm is compared with.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "collectives/communicator.hpp"
#include "tests/support/cluster_fixture.hpp"

namespace ranklab::testing {

/// One point of the grid. Each case runs every dtype of kDtypes in turn (for_each_dtype):
/// one test per dtype would quadruple the processes ctest starts, which cost more than the
/// runs themselves. Each case also runs under one schedule of kGridSchedules (grid() says
/// which).
struct GridCase {
  int world = 1;
  std::size_t count = 0;  ///< elements: the buffer, or one rank's block for block collectives
  Algorithm algorithm = Algorithm::direct;
  int threads = 1;
  std::string policy = "rank-order";

  /// The cluster this case runs on.
  ClusterOptions options() const {
    ClusterOptions o;
    o.world_size = world;
    o.threads = threads;
    o.policy = SchedulePolicy::parse(policy);
    return o;
  }

  /// `w13_n1024_ring_random:7_t2`: what gtest (and ctest's test names) show for the case,
  /// rather than its bytes, which hold the policy string's pointer.
  friend void PrintTo(const GridCase& c, std::ostream* os) {
    *os << fmt::format("w{}_n{}_{}_{}_t{}", c.world, c.count, to_string(c.algorithm), c.policy,
                       c.threads);
  }
};

/// Worker threads and scheduling policy: one and two threads, rank order and a random
/// policy. Not their cross product with every case (that would quadruple the grid's
/// processes): grid() turns through the four, so that every algorithm meets each of them on
/// every world and on every count.
struct GridSchedule {
  int threads = 1;
  const char* policy = "rank-order";
};
inline const std::vector<GridSchedule> kGridSchedules = {
    {1, "rank-order"}, {2, "random:7"}, {2, "rank-order"}, {1, "random:7"}};

/// Named apart from cluster_params.hpp's kWorlds: both headers are linked into one test binary,
/// and two inline variables of one name with different values break the one-definition rule.
inline const std::vector<int> kGridWorlds = {1, 2, 3, 4, 5, 7, 8, 13, 16};
inline const std::vector<std::size_t> kCounts = {0, 1, 7, 1024, 100'003};
inline const std::vector<DataType> kDtypes = {DataType::f32, DataType::f64, DataType::i32,
                                              DataType::i64};
inline const std::vector<ReduceOp> kOps = {ReduceOp::sum, ReduceOp::prod, ReduceOp::min,
                                           ReduceOp::max, ReduceOp::avg};

/// The schedule of the case at these indices into algorithms, kGridWorlds and kCounts: the
/// next one along each index, so any four consecutive counts of one algorithm and world (or
/// worlds of one algorithm and count) see all four schedules.
inline const GridSchedule& grid_schedule(std::size_t algorithm, std::size_t world,
                                         std::size_t count) {
  return kGridSchedules[(algorithm + world + count) % kGridSchedules.size()];
}

/// Every world x count x algorithm, except counts above `max_big_world`'s reach:
/// with block collectives a count of 100003 per rank means p * 100003 elements per rank,
/// so the largest count runs only on worlds up to `max_big_world` to keep the suite fast.
/// Each case under the schedule grid_schedule gives it.
inline std::vector<GridCase> grid(std::vector<Algorithm> algorithms, int max_big_world = 16) {
  std::vector<GridCase> cases;
  for (std::size_t a = 0; a < algorithms.size(); ++a) {
    for (std::size_t w = 0; w < kGridWorlds.size(); ++w) {
      for (std::size_t n = 0; n < kCounts.size(); ++n) {
        if (kCounts[n] > 10'000 && kGridWorlds[w] > max_big_world) continue;
        const GridSchedule& s = grid_schedule(a, w, n);
        cases.push_back({kGridWorlds[w], kCounts[n], algorithms[a], s.threads, s.policy});
      }
    }
  }
  return cases;
}

/// `w13_n1024_ring_random_7_t2`.
inline std::string case_name(const ::testing::TestParamInfo<GridCase>& info) {
  const GridCase& c = info.param;
  std::string algo(to_string(c.algorithm));
  for (char& ch : algo) ch = ch == '-' ? '_' : ch;
  return fmt::format("w{}_n{}_{}_{}_t{}", c.world, c.count, algo, policy_name(c.policy), c.threads);
}

/// Calls fn(std::type_identity<T>{}) with the C++ type of `dtype`.
template <typename Fn>
void with_type(DataType dtype, Fn&& fn) {
  switch (dtype) {
    case DataType::f32:
      return fn(std::type_identity<float>{});
    case DataType::f64:
      return fn(std::type_identity<double>{});
    case DataType::i32:
      return fn(std::type_identity<std::int32_t>{});
    case DataType::i64:
      return fn(std::type_identity<std::int64_t>{});
    case DataType::u8:
    case DataType::bf16:  // float16_test.cpp covers the 16-bit floats
    case DataType::f16:
      break;
  }
  FAIL() << "unsupported dtype " << to_string(dtype);
}

/// Calls fn(std::type_identity<T>{}) for every dtype of kDtypes, naming it in failures.
template <typename Fn>
void for_each_dtype(Fn&& fn) {
  for (DataType dtype : kDtypes) {
    SCOPED_TRACE(fmt::format("dtype {}", to_string(dtype)));
    with_type(dtype, fn);
  }
}

/// Far above any count, so rank * kStride + i is unique per (rank, i) and exact in float.
inline constexpr std::int64_t kStride = 1 << 17;

/// The data-movement pattern: rank * kStride + i (plus `salt` * 7, to tell buffers apart).
template <typename T>
std::vector<T> pattern(int rank, std::size_t count, std::int64_t salt = 0) {
  std::vector<T> v(count);
  for (std::size_t i = 0; i < count; ++i) {
    v[i] = static_cast<T>(rank * kStride + static_cast<std::int64_t>(i) + 7 * salt);
  }
  return v;
}

/// Reduction inputs: ((rank + i) mod p) * kStride + i - kStride, so the extreme moves from
/// rank to rank and some values are negative; floats divide it by 3 so sums round. prod
/// uses small factors that cannot overflow. Integer sums have a closed form (int_sum).
template <typename T>
T reduction_input(ReduceOp op, int p, int rank, std::size_t i) {
  const auto r = static_cast<std::int64_t>(rank), n = static_cast<std::int64_t>(p);
  const auto k = static_cast<std::int64_t>(i);
  if (op == ReduceOp::prod) {
    const std::int64_t m = (r + k) % 3;
    if constexpr (std::is_integral_v<T>)
      return static_cast<T>(m == 0 ? 2 : 1);
    else
      return static_cast<T>(1) + static_cast<T>(m) / static_cast<T>(8);
  }
  const std::int64_t base = ((r + k) % n) * kStride + k - kStride;
  if constexpr (std::is_integral_v<T>)
    return static_cast<T>(base);
  else
    return static_cast<T>(base) / static_cast<T>(3);
}

template <typename T>
std::vector<T> reduction_inputs(ReduceOp op, int p, int rank, std::size_t count) {
  std::vector<T> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = reduction_input<T>(op, p, rank, i);
  return v;
}

/// The closed form of the integer sum over ranks at index i.
inline std::int64_t int_sum(int p, std::size_t i) {
  const auto n = static_cast<std::int64_t>(p), k = static_cast<std::int64_t>(i);
  return kStride * n * (n - 1) / 2 + n * k - n * kStride;
}

template <typename T>
T combine(ReduceOp op, T a, T b) {
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::avg:
      return static_cast<T>(a + b);
    case ReduceOp::prod:
      return static_cast<T>(a * b);
    case ReduceOp::min:
      return std::min(a, b);
    case ReduceOp::max:
      return std::max(a, b);
    case ReduceOp::band:  // not in kOps: float16_test.cpp covers the bitwise reductions
    case ReduceOp::bor:
    case ReduceOp::bxor:
      break;
  }
  ADD_FAILURE() << "combine: " << to_string(op) << " is not a grid op";
  return a;
}

/// The naive reference of element i: a left fold in ascending rank, as `direct` computes
/// it, and the tolerance the other algorithms get (algorithm.hpp derives it): sum
/// (p-1) * eps * sum|x|; avg that over p plus one rounding; prod (p-1) * eps * |result|;
/// min, max and integers exact.
template <typename T>
struct Expected {
  T value{};
  double tolerance = 0;
};

template <typename T>
Expected<T> reference(ReduceOp op, int p, std::size_t i) {
  T acc = reduction_input<T>(op, p, 0, i);
  double magnitude = std::abs(static_cast<double>(acc));
  for (int r = 1; r < p; ++r) {
    const T x = reduction_input<T>(op, p, r, i);
    acc = combine(op, acc, x);
    magnitude += std::abs(static_cast<double>(x));
  }
  if (op == ReduceOp::avg) acc = static_cast<T>(acc / static_cast<T>(p));
  Expected<T> e{acc, 0.0};
  if constexpr (std::is_floating_point_v<T>) {
    const double eps = std::numeric_limits<T>::epsilon();
    const double slack = 1.0001;  // gamma(k) = k*u / (1 - k*u), a hair above k*u
    const double v = std::abs(static_cast<double>(acc));
    if (op == ReduceOp::sum) e.tolerance = slack * (p - 1) * eps * magnitude;
    if (op == ReduceOp::avg) e.tolerance = slack * ((p - 1) * eps * magnitude / p + eps * v);
    if (op == ReduceOp::prod) e.tolerance = slack * (p - 1) * eps * v;
  }
  return e;
}

/// The references of elements [first, first + count).
template <typename T>
std::vector<Expected<T>> references(ReduceOp op, int p, std::size_t first, std::size_t count) {
  std::vector<Expected<T>> out(count);
  for (std::size_t k = 0; k < count; ++k) out[k] = reference<T>(op, p, first + k);
  return out;
}

/// Compares `got` with `expected`; `exact` demands bitwise agreement (direct, integers).
/// Returns "" or the first difference.
template <typename T>
std::string compare_reduction(ReduceOp op, std::span<const T> got,
                              const std::vector<Expected<T>>& expected, bool exact) {
  if (got.size() != expected.size()) {
    return fmt::format("{}: {} elements, expected {}", to_string(op), got.size(), expected.size());
  }
  for (std::size_t k = 0; k < got.size(); ++k) {
    const Expected<T>& e = expected[k];
    const double diff = std::abs(static_cast<double>(got[k]) - static_cast<double>(e.value));
    const bool ok = (exact || std::is_integral_v<T>) ? got[k] == e.value : diff <= e.tolerance;
    if (!ok) {
      return fmt::format("{} element {}: got {} expected {} (diff {:g}, tolerance {:g})",
                         to_string(op), k, got[k], e.value, diff, e.tolerance);
    }
  }
  return {};
}

/// A hash of a buffer's bytes, to check results are bitwise identical across ranks and runs.
template <typename T>
std::size_t hash_of(std::span<const T> v) {
  return std::hash<std::string_view>{}(
      std::string_view(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T)));
}

/// Runs `fn` on `world` ranks and expects the run to succeed.
inline void run_grid(int world, const std::function<void(Communicator&)>& fn,
                     ClusterOptions options = {}) {
  options.world_size = world;
  expect_run_ok(std::move(options), fn);
}

/// Runs `fn` on the case's world under its schedule and expects the run to succeed.
inline void run_grid(const GridCase& c, const std::function<void(Communicator&)>& fn) {
  expect_run_ok(c.options(), fn);
}

}  // namespace ranklab::testing
