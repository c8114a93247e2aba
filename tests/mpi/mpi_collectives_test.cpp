// Every collective on Open MPI against the emulator: each process runs the same rank program
// on an emulator cluster of the job's size and on the MPI world, and compares its own rank's
// results. Point-to-point algorithms and `direct` must agree bit for bit; MPI's own
// collectives (library) within the rounding bound of algorithm.hpp.
#include <cmath>
#include <cstring>
#include <limits>

#include <gtest/gtest.h>

#include "tests/mpi/collective_cases.hpp"
#include "tests/mpi/mpi_test_support.hpp"

namespace ranklab::testing {
namespace {

using Results = std::vector<std::vector<std::byte>>;  // by case

// Every rank's results of `program` on the emulator, by rank.
std::vector<Results> emulator_results(const std::function<Results(Communicator&)>& program) {
  std::vector<Results> by_rank(static_cast<std::size_t>(session().size()));
  run_on_emulator([&](Communicator& comm) {
    by_rank[static_cast<std::size_t>(comm.rank())] = program(comm);
  });
  return by_rank;
}

Results run_all(Communicator& comm, const std::vector<CollectiveCase>& cases) {
  Results results;
  for (const CollectiveCase& c : cases) results.push_back(run_case(comm, c));
  return results;
}

// The unit roundoff's double, 2^(1 - significand bits), of each floating-point type.
template <typename T>
double epsilon_of() {
  if constexpr (std::is_same_v<T, BFloat16>) return 0x1p-7;
  else if constexpr (std::is_same_v<T, Float16>) return 0x1p-10;
  else return std::numeric_limits<T>::epsilon();
}

template <typename T>
double to_double(T value) {
  if constexpr (std::is_same_v<T, BFloat16> || std::is_same_v<T, Float16>) {
    return static_cast<float>(value);
  } else {
    return static_cast<double>(value);
  }
}

// Whether `got` is within MPI's rounding of `want` (floating-point reductions only).
template <typename T>
bool within_rounding(const std::byte* got, const std::byte* want, std::size_t count, int p) {
  const double eps = epsilon_of<T>();
  for (std::size_t i = 0; i < count; ++i) {
    T a, b;
    std::memcpy(&a, got + i * sizeof(T), sizeof(T));
    std::memcpy(&b, want + i * sizeof(T), sizeof(T));
    // |x_i| <= 20/9 here, so sum |x_i| <= 3p (algorithm.hpp's bound, with room).
    const double bound = 4.0 * p * eps * (3.0 * p + std::fabs(to_double(b)));
    if (std::fabs(to_double(a) - to_double(b)) > bound) return false;
  }
  return true;
}

bool agree(const CollectiveCase& c, const std::vector<std::byte>& got,
           const std::vector<std::byte>& want, bool library, int p) {
  if (got.size() != want.size()) return false;
  const bool rounded = library && takes_reduce_op(c.op) && !is_integer(c.dtype) &&
                       (c.reduce_op == ReduceOp::sum || c.reduce_op == ReduceOp::prod ||
                        c.reduce_op == ReduceOp::avg);
  if (!rounded) return got == want;
  const std::size_t count = got.size() / size_of(c.dtype);
  switch (c.dtype) {
    case DataType::f32: return within_rounding<float>(got.data(), want.data(), count, p);
    case DataType::f64: return within_rounding<double>(got.data(), want.data(), count, p);
    case DataType::bf16: return within_rounding<BFloat16>(got.data(), want.data(), count, p);
    case DataType::f16: return within_rounding<Float16>(got.data(), want.data(), count, p);
    default: return got == want;
  }
}

// Compares every case; never stops early, since every rank must make the same calls.
void expect_same(const std::vector<CollectiveCase>& cases, const Results& got,
                 const Results& want, bool library) {
  const int me = session().rank();
  int reported = 0;
  for (std::size_t k = 0; k < cases.size(); ++k) {
    if (agree(cases[k], got[k], want[k], library, session().size())) continue;
    if (++reported <= 10) {
      ADD_FAILURE() << "rank " << me << ": " << cases[k].name() << " differs from the emulator";
    }
  }
  EXPECT_EQ(reported, 0) << "rank " << me << ": cases that differ, of " << cases.size();
}

//! Every algorithm, dtype and reduce op, blocking and not: bitwise the emulator's results.
TEST(MpiCollectives, BitwiseAsTheEmulator) {
  const std::vector<CollectiveCase> cases = collective_cases(session().size());
  const std::vector<Results> want =
      emulator_results([&](Communicator& comm) { return run_all(comm, cases); });
  Communicator world = session().world();
  const Results got = run_all(world, cases);
  expect_same(cases, got, want[static_cast<std::size_t>(world.rank())], /*library=*/false);
}

//! MPI's own collectives: exact where the result has no rounding, within it where it has.
TEST(MpiCollectives, LibraryCollectivesWithinRounding) {
  std::vector<CollectiveCase> cases;
  for (const CollectiveCase& c : collective_cases(session().size())) {
    if (c.algorithm == Algorithm::direct) cases.push_back(c);
  }
  const std::vector<Results> want =
      emulator_results([&](Communicator& comm) { return run_all(comm, cases); });
  Communicator library(make_mpi_backend({.library_collectives = true}), Algorithm::direct);
  const Results got = run_all(library, cases);
  expect_same(cases, got, want[static_cast<std::size_t>(library.rank())], /*library=*/true);
}

//! Non-blocking direct collectives overlap each other, a ring all_reduce and all_to_all_v,
//! and are waited for in different orders on different ranks.
TEST(MpiCollectives, OverlappingNonBlockingCallsAsTheEmulator) {
  const std::vector<Results> want =
      emulator_results([](Communicator& comm) { return Results{run_overlapping(comm)}; });
  Communicator world = session().world();
  const Results got{run_overlapping(world)};
  EXPECT_TRUE(got == want[static_cast<std::size_t>(world.rank())]) << "rank " << world.rank();
}

//! split and new_group make MPI communicators whose collectives match the emulator's groups.
TEST(MpiCollectives, GroupsAsTheEmulator) {
  const std::vector<Results> want =
      emulator_results([](Communicator& comm) { return Results{run_groups(comm)}; });
  Communicator world = session().world();
  const Results got{run_groups(world)};
  EXPECT_TRUE(got == want[static_cast<std::size_t>(world.rank())]) << "rank " << world.rank();
}

}  // namespace
}  // namespace ranklab::testing
