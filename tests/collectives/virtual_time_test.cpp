// The cost model against closed forms, on traces of real runs: collectives run as
// messages by the algorithms of collectives/algorithms/, recorded, then timed message by
// message (traces/virtual_time.hpp), must take what the textbook formulas say, and what the
// cost model charges a native collective.
#include "traces/virtual_time.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tests/support/cluster_params.hpp"
#include "traces/sink.hpp"

namespace ranklab {
namespace {

constexpr double kAlpha = 2e-6;  // s
constexpr double kBeta = 1e9;    // B/s

/// Runs `program` on `world` ranks under `policy` and returns its trace.
Trace record(int world, const std::function<void(Communicator&)>& program,
             const std::string& policy = "rank-order") {
  ClusterOptions options = testing::ClusterParam{world, policy, 1}.options();
  auto sink = std::make_shared<MemorySink>();
  options.trace_sink = sink;
  const RunReport report = testing::run_ranks(options, program);
  EXPECT_TRUE(testing::run_ok(report));
  return sink->trace();
}

double step_of(const Trace& trace) {
  const VirtualTimes t = simulate(trace, CostModel::alpha_beta(kAlpha, kBeta));
  EXPECT_TRUE(t.complete);
  return t.step_seconds;
}

int ceil_log2(int p) {
  int k = 0;
  while ((1 << k) < p) ++k;
  return k;
}

class VirtualTimeClosedFormTest : public ::testing::TestWithParam<int> {};

//! Ring all_reduce of n bytes takes 2(p-1)(α + n/(pβ)), message by message, under any policy.
TEST_P(VirtualTimeClosedFormTest, RingAllReduce) {
  const int p = GetParam();
  const std::size_t per_rank = 64;  // floats per block, so n/p is whole
  const std::size_t count = per_rank * static_cast<std::size_t>(p);
  const double n = static_cast<double>(count * sizeof(float));
  const double expected = 2.0 * (p - 1) * (kAlpha + n / (p * kBeta));
  for (const char* policy : {"rank-order", "random:5"}) {
    const Trace trace = record(
        p,
        [&](Communicator& world) {
          std::vector<float> v(count, 1.0f);
          world.all_reduce(std::span(v), {.algorithm = Algorithm::ring});
        },
        policy);
    EXPECT_NEAR(step_of(trace), expected, expected * 1e-9) << policy;
  }
  // The native all_reduce is charged the same formula.
  const Trace native = record(p, [&](Communicator& world) {
    std::vector<float> v(count, 1.0f);
    world.all_reduce(std::span(v));
  });
  EXPECT_NEAR(step_of(native), expected, expected * 1e-9);
}

//! Binomial-tree broadcast of n bytes takes ceil(log2 p)(α + n/β), from any root.
TEST_P(VirtualTimeClosedFormTest, TreeBroadcast) {
  const int p = GetParam();
  const double n = 1000 * sizeof(double);
  const double expected = ceil_log2(p) * (kAlpha + n / kBeta);
  for (int root : {0, p - 1}) {
    const Trace trace = record(p, [&](Communicator& world) {
      std::vector<double> v(1000);
      world.broadcast(std::span(v), {.root = root, .algorithm = Algorithm::tree});
    });
    EXPECT_NEAR(step_of(trace), expected, expected * 1e-9) << "root " << root;
  }
}

//! Ring all_gather and reduce_scatter of a unit of n bytes take (p-1)(α + n/β).
TEST_P(VirtualTimeClosedFormTest, RingAllGatherAndReduceScatter) {
  const int p = GetParam();
  const std::size_t unit = 256;
  const double expected = (p - 1) * (kAlpha + unit * sizeof(float) / kBeta);
  const Trace gather = record(p, [&](Communicator& world) {
    std::vector<float> in(unit), out(unit * static_cast<std::size_t>(p));
    world.all_gather(std::span<const float>(in), std::span(out), {.algorithm = Algorithm::ring});
  });
  EXPECT_NEAR(step_of(gather), expected, expected * 1e-9);
  const Trace scatter = record(p, [&](Communicator& world) {
    std::vector<float> in(unit * static_cast<std::size_t>(p)), out(unit);
    world.reduce_scatter(std::span<const float>(in), std::span(out),
                         {.algorithm = Algorithm::ring});
  });
  EXPECT_NEAR(step_of(scatter), expected, expected * 1e-9);
}

INSTANTIATE_TEST_SUITE_P(Worlds, VirtualTimeClosedFormTest, ::testing::Values(2, 3, 4, 5, 8, 13),
                         [](const auto& param) { return "p" + std::to_string(param.param); });

//! One message of n bytes takes α + n/β; a ping-pong two of them; eager sends let the
//! sender go on at once.
TEST(VirtualTimeTest, PointToPoint) {
  const double n = 4096 * sizeof(float);
  const auto ping_pong = [](Communicator& world) {
    std::vector<float> v(4096);
    if (world.rank() == 0) {
      world.send(std::span<const float>(v), 1, 0);
      world.recv(std::span(v), 1, 0);
    } else {
      world.recv(std::span(v), 0, 0);
      world.send(std::span<const float>(v), 0, 0);
    }
  };
  const Trace trace = record(2, ping_pong);
  EXPECT_NEAR(step_of(trace), 2 * (kAlpha + n / kBeta), 1e-15);
  const VirtualTimes t = simulate(trace, CostModel::alpha_beta(kAlpha, kBeta));
  EXPECT_NEAR(t.operations[1][0].end, kAlpha + n / kBeta, 1e-15);  // rank 1's recv
  EXPECT_DOUBLE_EQ(t.ranks[0].busy, t.step_seconds);               // both always transferring
  EXPECT_NEAR(t.bubble, 0.0, 1e-12);
}

}  // namespace
}  // namespace ranklab
