// The cluster itself: configuration (options, parsing, RANKLAB_* variables), this_rank::,
// several clusters in one process (one after another, side by side), and a scale smoke test.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "comm/errors.hpp"
#include "emulator/engine.hpp"
#include "emulator/rank.hpp"
#include "tests/emulator/emulator_test_support.hpp"
#include "tests/support/expect_throw_msg.hpp"
#include "traces/sink.hpp"

namespace ranklab::testing {
namespace {

// A small program with groups, p2p and collectives whose trace depends only on the policy.
void mixed_program(Communicator& world) {
  const int me = world.rank(), n = world.size();
  const std::int64_t mine = me;
  std::int64_t left = -1;
  Work sent = world.isend(std::span(&mine, 1), (me + 1) % n, /*tag=*/0);
  world.recv(std::span(&left, 1), (me + n - 1) % n, /*tag=*/0);
  sent.wait();
  std::vector<float> x = fill<float>(me, 8);
  world.all_reduce(std::span(x));
  const std::vector<int> pair = {me - me % 2, std::min(me - me % 2 + 1, n - 1)};
  Communicator tp = world.new_group(pair[0] == pair[1] ? std::vector<int>{pair[0]} : pair, "tp");
  tp.all_reduce(std::span(x));
  world.barrier();
}

Trace traced_run(ClusterOptions options) {
  auto sink = std::make_shared<MemorySink>();
  options.trace_sink = sink;
  const RunReport report = run_ranks(options, mixed_program);
  EXPECT_TRUE(run_ok(report));
  return sink->trace();
}

//! this_rank:: answers inside a rank, for that rank, and yield() lets others run.
TEST(ThisRankTest, AnswersInsideARank) {
  for (int threads : {1, 2}) {
    ClusterOptions options;
    options.world_size = 5;
    options.threads = threads;
    Engine engine(options);
    const RunReport report = engine.run([](RankContext& ctx) {
      EXPECT_EQ(this_rank::rank(), ctx.rank());
      EXPECT_EQ(this_rank::world_size(), 5);
      EXPECT_EQ(&this_rank::context(), &ctx);
      this_rank::yield();
      EXPECT_EQ(this_rank::rank(), ctx.rank()) << "still the same rank after a yield";
      EXPECT_EQ(ctx.options().world_size, 5);
    });
    EXPECT_TRUE(run_ok(report));
  }
}

//! Outside a rank, this_rank:: throws a UsageError saying so instead of crashing.
TEST(ThisRankTest, OutsideARankIsAUsageError) {
  EXPECT_THROW_MSG(this_rank::rank(), UsageError,
                   "this_rank: called outside a rank of a running cluster");
  std::thread plain([] {
    EXPECT_THROW_MSG(this_rank::world_size(), UsageError,
                     "this_rank: called outside a rank of a running cluster");
  });
  plain.join();
}

// Sets (or unsets, for nullopt) an environment variable for one scope.
class EnvVar {
 public:
  EnvVar(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~EnvVar() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  EnvVar(const EnvVar&) = delete;
  EnvVar& operator=(const EnvVar&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

//! With no RANKLAB_* variables set, from_env gives the defaults.
TEST(OptionsTest, FromEnvDefaultsWhenUnset) {
  EnvVar a("RANKLAB_THREADS", std::nullopt), b("RANKLAB_TIMEOUT_MS", std::nullopt),
      c("RANKLAB_POLICY", std::nullopt), d("RANKLAB_SEND_MODE", std::nullopt);
  const ClusterOptions o = ClusterOptions::from_env();
  const ClusterOptions defaults;
  EXPECT_EQ(o.threads, defaults.threads);
  EXPECT_EQ(o.timeout, defaults.timeout);
  EXPECT_EQ(o.policy.to_string(), "rank-order");
  EXPECT_EQ(o.send_mode.to_string(), "rendezvous");
  EXPECT_EQ(o.world_size, 8);
}

//! RANKLAB_THREADS, RANKLAB_TIMEOUT_MS, RANKLAB_POLICY and RANKLAB_SEND_MODE override the
//! defaults, and a cluster built from them runs with them.
TEST(OptionsTest, FromEnvReadsEveryVariable) {
  EnvVar a("RANKLAB_THREADS", "2"), b("RANKLAB_TIMEOUT_MS", "1500"), c("RANKLAB_POLICY", "pct:9:2"),
      d("RANKLAB_SEND_MODE", "eager<=64");
  ClusterOptions o = ClusterOptions::from_env();
  EXPECT_EQ(o.threads, 2);
  EXPECT_EQ(o.timeout, std::chrono::milliseconds(1500));
  EXPECT_EQ(o.policy.kind, SchedulePolicy::Kind::pct);
  EXPECT_EQ(o.policy.seed, 9u);
  EXPECT_EQ(o.policy.depth, 2);
  EXPECT_EQ(o.send_mode.kind, SendMode::Kind::eager_upto);
  EXPECT_EQ(o.send_mode.eager_limit, 64u);
  o.world_size = 3;
  EXPECT_TRUE(run_ok(run_ranks(o, [](Communicator& world) {
    EXPECT_EQ(this_rank::context().options().send_mode.to_string(), "eager<=64");
    world.barrier();
  })));
}

//! Malformed RANKLAB_* values are UsageErrors naming the variable or the value.
TEST(OptionsTest, FromEnvRejectsMalformedValues) {
  {
    EnvVar a("RANKLAB_THREADS", "two");
    EXPECT_THROW_MSG(ClusterOptions::from_env(), UsageError,
                     "invalid RANKLAB_THREADS 'two' in 'two': expected a non-negative integer");
  }
  {
    EnvVar b("RANKLAB_TIMEOUT_MS", "-5");
    EXPECT_THROW_MSG(ClusterOptions::from_env(), UsageError, "invalid RANKLAB_TIMEOUT_MS '-5'");
  }
  {
    EnvVar c("RANKLAB_POLICY", "fifo");
    EXPECT_THROW_MSG(ClusterOptions::from_env(), UsageError, "unknown scheduling policy 'fifo'");
  }
  {
    EnvVar d("RANKLAB_SEND_MODE", "buffered");
    EXPECT_THROW_MSG(ClusterOptions::from_env(), UsageError, "unknown send mode 'buffered'");
  }
}

//! Policies and send modes parse from their text forms and print back the same way;
//! malformed ones are UsageErrors naming the text.
TEST(OptionsTest, PolicyAndSendModeParsing) {
  for (const char* text :
       {"rank-order", "random:0", "random:18446744073709551615", "pct:3:1", "pct:7:1000"}) {
    EXPECT_EQ(SchedulePolicy::parse(text).to_string(), text);
  }
  EXPECT_EQ(SchedulePolicy::parse("pct:5").to_string(), "pct:5:3") << "default depth 3";
  EXPECT_THROW_MSG(SchedulePolicy::parse("random"), UsageError,
                   "unknown scheduling policy 'random': expected rank-order, random:SEED, "
                   "pct:SEED[:DEPTH] or preempt:STEP=RANK,...");
  EXPECT_THROW_MSG(SchedulePolicy::parse("random:x"), UsageError, "invalid seed 'x' in 'random:x'");
  EXPECT_THROW_MSG(SchedulePolicy::parse("pct:1:0"), UsageError,
                   "invalid depth in 'pct:1:0': expected 1..1000");
  EXPECT_THROW_MSG(SchedulePolicy::parse("pct:1:2:3"), UsageError, "invalid depth '2:3'");
  for (const char* text : {"rendezvous", "eager", "eager<=0", "eager<=4096"}) {
    EXPECT_EQ(SendMode::parse(text).to_string(), text);
  }
  EXPECT_THROW_MSG(SendMode::parse("eager<="), UsageError, "invalid byte limit '' in 'eager<='");
  EXPECT_THROW_MSG(SendMode::parse("lazy"), UsageError,
                   "unknown send mode 'lazy': expected rendezvous, eager or eager<=BYTES");
  const SendMode upto = SendMode::parse("eager<=16");
  EXPECT_TRUE(upto.buffers(16));
  EXPECT_FALSE(upto.buffers(17));
  EXPECT_FALSE(SendMode::parse("rendezvous").buffers(0));
}

//! A cluster refuses impossible configurations with a message naming the value.
TEST(OptionsTest, ClusterRejectsImpossibleConfigurations) {
  ClusterOptions o;
  o.world_size = 0;
  EXPECT_THROW_MSG(Cluster{o}, UsageError, "world size must be at least 1, got 0");
  o.world_size = 2;
  o.threads = 0;
  EXPECT_THROW_MSG(Cluster{o}, UsageError, "threads must be at least 1, got 0");
  o.threads = 1;
  o.stack_size = 1024;
  EXPECT_THROW_MSG(Cluster{o}, UsageError, "stack size must be at least 16 KiB, got 1024");
}

//! Clusters run one after another in one process, a failed run leaving nothing behind:
//! a deadlocked run between two good ones changes neither their results nor their traces.
TEST(MultipleClustersTest, OneAfterAnother) {
  ClusterOptions options;
  options.world_size = 8;
  options.policy = SchedulePolicy::parse("random:3");
  const Trace first = traced_run(options);
  ClusterOptions bad = options;
  bad.threads = 2;
  const RunReport deadlocked = run_ranks(bad, [](Communicator& world) {
    if (world.rank() == 0) world.barrier();
  });
  EXPECT_EQ(deadlocked.status, RunStatus::deadlock);
  const Trace again = traced_run(options);
  EXPECT_EQ(first, again);
}

//! Two clusters run side by side on two std::threads without sharing scheduler state: each
//! gives the trace it gives alone, event for event.
TEST(MultipleClustersTest, SideBySide) {
  ClusterOptions a;
  a.world_size = 13;
  a.policy = SchedulePolicy::parse("random:5");
  ClusterOptions b;
  b.world_size = 8;
  b.policy = SchedulePolicy::parse("pct:2:3");
  const Trace alone_a = traced_run(a);
  const Trace alone_b = traced_run(b);
  for (int round = 0; round < 3; ++round) {
    Trace together_a, together_b;
    std::thread ta([&] { together_a = traced_run(a); });
    std::thread tb([&] { together_b = traced_run(b); });
    ta.join();
    tb.join();
    EXPECT_EQ(together_a, alone_a) << "round " << round;
    EXPECT_EQ(together_b, alone_b) << "round " << round;
  }
  // And with several worker threads each (results only: lamport clocks may differ).
  a.threads = 2;
  b.threads = 2;
  std::thread ta([&] { EXPECT_TRUE(run_ok(run_ranks(a, mixed_program))); });
  std::thread tb([&] { EXPECT_TRUE(run_ok(run_ranks(b, mixed_program))); });
  ta.join();
  tb.join();
}

struct ScaleParam {
  int world;
  int threads;
  bool communicator;  ///< through the Communicator (fingerprints) or the bare RankContext

  friend void PrintTo(const ScaleParam& p, std::ostream* os) {
    *os << p.world << (p.communicator ? " ranks, communicator, t" : " ranks, native, t")
        << p.threads;
  }
};

class ScaleTest : public ::testing::TestWithParam<ScaleParam> {};

//! 1,024 ranks do a barrier and an all_reduce of one float, quickly, on 1 or 2 threads,
//! through the emulator's native calls and through the Communicator.
TEST_P(ScaleTest, BarrierAndAllReduceOfOneFloat) {
  const ScaleParam p = GetParam();
  ClusterOptions options;
  options.world_size = p.world;
  options.threads = p.threads;
  options.stack_size = 64 * 1024;
  const auto start = std::chrono::steady_clock::now();
  const auto check_sum = [&](int rank, float x) {
    if (x != static_cast<float>(p.world)) {
      throw Error(fmt::format("rank {}: sum is {}, expected {}", rank, x, p.world));
    }
  };
  const RunReport report =
      p.communicator
          ? run_ranks(options,
                      [&](Communicator& world) {
                        float x = 1.0f;
                        world.barrier();
                        world.all_reduce(std::span(&x, 1));
                        check_sum(world.rank(), x);
                      })
          : Engine(options).run([&](RankContext& ctx) {
              float x = 1.0f;
              ctx.barrier(ctx.world());
              ctx.all_reduce(ctx.world(), as_mutable_buffer(std::span(&x, 1)), ReduceOp::sum);
              check_sum(ctx.rank(), x);
            });
  EXPECT_TRUE(run_ok(report));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

INSTANTIATE_TEST_SUITE_P(Ranks, ScaleTest,
                         ::testing::Values(ScaleParam{1024, 1, false}, ScaleParam{1024, 2, false},
                                           ScaleParam{1024, 1, true}, ScaleParam{1024, 2, true}),
                         [](const auto& info_) {
                           const ScaleParam& q = info_.param;
                           return fmt::format("w{}_{}_t{}", q.world,
                                              q.communicator ? "communicator" : "native",
                                              q.threads);
                         });

}  // namespace
}  // namespace ranklab::testing
