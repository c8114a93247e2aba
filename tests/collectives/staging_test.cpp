// The Communicator's staging of device buffers (collectives/staging.hpp): every call on a
// buffer in a device's memory runs on host copies, one copy each way, whatever the
// algorithm, with the copies in the trace; the results are those of the same call on host
// buffers.
#include "collectives/staging.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <numeric>
#include <vector>

#include "collectives/cluster.hpp"
#include "comm/device.hpp"
#include "comm/errors.hpp"
#include "tests/support/cluster_fixture.hpp"
#include "tests/support/staging_copies.hpp"
#include "traces/sink.hpp"

namespace ranklab {
namespace {

using testing::staging_of;

// A device memory that counts its copies and poisons nothing: what the tests check is that
// the backend only ever sees host buffers and that each direction is crossed once.
class CountingMemory final : public DeviceMemory {
 public:
  explicit CountingMemory(int index) : id_{DeviceKind::cpu_staged, index} {}
  DeviceId id() const override { return id_; }
  void copy_to_host(void* to, const void* from, std::size_t bytes) const override {
    ++to_host;
    host_bytes += bytes;
    std::memcpy(to, from, bytes);
  }
  void copy_to_device(void* to, const void* from, std::size_t bytes) const override {
    ++to_device;
    device_bytes += bytes;
    std::memcpy(to, from, bytes);
  }
  mutable int to_host = 0, to_device = 0;
  mutable std::size_t host_bytes = 0, device_bytes = 0;

 private:
  DeviceId id_;
};

ClusterOptions traced(int world, const std::shared_ptr<MemorySink>& sink) {
  ClusterOptions options;
  options.world_size = world;
  options.trace_sink = sink;
  return options;
}

class StagingAlgorithmTest : public ::testing::TestWithParam<Algorithm> {};

//! An all_reduce of a device buffer gives the host result under every algorithm, copies the
//! buffer to the host once and back once, and records both copies on the rank's trace.
TEST_P(StagingAlgorithmTest, AllReduceStagesOnceEachWay) {
  constexpr int kWorld = 4;
  constexpr std::size_t kCount = 10;
  auto sink = std::make_shared<MemorySink>();
  std::vector<std::vector<float>> results(kWorld);
  std::vector<CountingMemory> memories{CountingMemory(0), CountingMemory(1), CountingMemory(2),
                                       CountingMemory(3)};
  testing::expect_run_ok(
      traced(kWorld, sink),
      [&](Communicator& world) {
        std::vector<float> data(kCount);
        std::iota(data.begin(), data.end(), static_cast<float>(world.rank()));
        const auto& memory = memories[static_cast<std::size_t>(world.rank())];
        world.all_reduce(MutableBuffer{data.data(), kCount, DataType::f32, &memory});
        results[static_cast<std::size_t>(world.rank())] = data;
      },
      GetParam());
  for (int r = 0; r < kWorld; ++r) {
    for (std::size_t i = 0; i < kCount; ++i) {
      EXPECT_EQ(results[static_cast<std::size_t>(r)][i], static_cast<float>(4 * i + 6));
    }
    const CountingMemory& m = memories[static_cast<std::size_t>(r)];
    EXPECT_EQ(m.to_host, 1);
    EXPECT_EQ(m.to_device, 1);
    EXPECT_EQ(m.host_bytes, kCount * 4);
    EXPECT_EQ(m.device_bytes, kCount * 4);
  }
  const Trace trace = sink->trace();
  for (int r = 0; r < kWorld; ++r) {
    const auto copies = staging_of(trace.ranks[static_cast<std::size_t>(r)]);
    ASSERT_EQ(copies.size(), 2u) << "rank " << r;
    EXPECT_EQ(copies[0].copy, StagingCopy::to_host);
    EXPECT_EQ(copies[1].copy, StagingCopy::to_device);
    EXPECT_EQ(copies[0].bytes, kCount * 4);
    EXPECT_EQ(copies[0].device, "cpu-staged:" + std::to_string(r));
    // The copy to the host comes before the first operation of the call; the copy back
    // after its last (here: after the rank's last operation).
    const auto& events = trace.ranks[static_cast<std::size_t>(r)];
    EXPECT_TRUE(events.front().compute.items.front().staging());
    EXPECT_TRUE(events.back().compute_after.items.back().staging());
  }
}

INSTANTIATE_TEST_SUITE_P(Algorithms, StagingAlgorithmTest,
                         ::testing::Values(Algorithm::direct, Algorithm::ring,
                                           Algorithm::recursive_doubling,
                                           Algorithm::halving_doubling));

//! A staged receive copies back only what arrived (a larger buffer keeps the rest), when
//! its Work completes; a staged isend's host copy outlives the call.
TEST(StagingTest, PointToPointStagesWhatMoves) {
  auto sink = std::make_shared<MemorySink>();
  CountingMemory sender(0);
  CountingMemory receiver(1);
  std::vector<double> received(8, -1.0);
  testing::expect_run_ok(traced(2, sink), [&](Communicator& world) {
    if (world.rank() == 0) {
      std::vector<double> data = {1, 2, 3, 4, 5};
      Work sent = world.isend(ConstBuffer{data.data(), 5, DataType::f64, &sender}, 1, 3);
      std::fill(data.begin(), data.end(), 0.0);  // the host copy was taken at the call
      sent.wait();
    } else {
      Work work = world.irecv(MutableBuffer{received.data(), 8, DataType::f64, &receiver}, 0, 3);
      work.wait();
      EXPECT_EQ(work.status().count, 5u);
    }
  });
  EXPECT_EQ(received, (std::vector<double>{1, 2, 3, 4, 5, -1, -1, -1}));
  EXPECT_EQ(sender.to_host, 1);
  EXPECT_EQ(sender.to_device, 0);
  EXPECT_EQ(receiver.to_host, 0);
  EXPECT_EQ(receiver.to_device, 1);
  EXPECT_EQ(receiver.device_bytes, 5 * sizeof(double));
  const Trace trace = sink->trace();
  ASSERT_EQ(staging_of(trace.ranks[1]).size(), 1u);
  EXPECT_EQ(staging_of(trace.ranks[1])[0].bytes, 5 * sizeof(double));
}

//! An all_gather whose input is its own block of the output (in place) stays in place on
//! the host: one copy of the output each way.
TEST(StagingTest, InPlaceAllGatherSharesOneHostBuffer) {
  std::vector<CountingMemory> memories{CountingMemory(0), CountingMemory(1), CountingMemory(2)};
  std::vector<std::vector<std::int32_t>> results(3);
  testing::expect_run_ok(traced(3, nullptr), [&](Communicator& world) {
    const auto r = static_cast<std::size_t>(world.rank());
    std::vector<std::int32_t> all(6, 0);
    all[2 * r] = static_cast<std::int32_t>(10 * r);
    all[2 * r + 1] = static_cast<std::int32_t>(10 * r + 1);
    world.all_gather(ConstBuffer{all.data() + 2 * r, 2, DataType::i32, &memories[r]},
                     MutableBuffer{all.data(), 6, DataType::i32, &memories[r]});
    results[r] = all;
  });
  for (std::size_t r = 0; r < 3; ++r) {
    EXPECT_EQ(results[r], (std::vector<std::int32_t>{0, 1, 10, 11, 20, 21}));
    EXPECT_EQ(memories[r].to_host, 1);
    EXPECT_EQ(memories[r].to_device, 1);
    EXPECT_EQ(memories[r].host_bytes, 6 * 4u);
  }
}

//! A non-blocking collective on a device buffer copies back when it is waited for.
TEST(StagingTest, NonBlockingCollectiveCopiesBackOnWait) {
  std::vector<CountingMemory> memories{CountingMemory(0), CountingMemory(1)};
  testing::expect_run_ok(traced(2, nullptr), [&](Communicator& world) {
    const auto r = static_cast<std::size_t>(world.rank());
    std::int64_t value = static_cast<std::int64_t>(r) + 1;
    Work work = world.iall_reduce(MutableBuffer{&value, 1, DataType::i64, &memories[r]});
    work.wait();
    EXPECT_EQ(value, 3);
    EXPECT_EQ(memories[r].to_device, 1);
    work.wait();  // a second wait copies nothing more
    EXPECT_EQ(memories[r].to_device, 1);
  });
}

//! Input and output on two different devices: one line naming both.
TEST(StagingTest, TwoDevicesInOneCallFail) {
  CountingMemory a(0);
  CountingMemory b(1);
  const RunReport report = testing::run_ranks(traced(1, nullptr), [&](Communicator& world) {
    std::vector<float> in(2), out(2);
    world.all_gather(ConstBuffer{in.data(), 2, DataType::f32, &a},
                     MutableBuffer{out.data(), 2, DataType::f32, &b});
  });
  EXPECT_NE(report.status, RunStatus::ok);
  EXPECT_NE((report.summary + report.details).find("cpu-staged:0 and cpu-staged:1"),
            std::string::npos)
      << report.summary << report.details;
}

//! The rank's device comes from the cluster options (rank r: device index r).
TEST(StagingTest, CommunicatorNamesTheClusterDevice) {
  ClusterOptions options = traced(3, nullptr);
  options.device = DeviceKind::cpu_staged;
  std::vector<std::string> names(3);
  testing::expect_run_ok(options, [&](Communicator& world) {
    names[static_cast<std::size_t>(world.rank())] = world.device().name();
  });
  EXPECT_EQ(names, (std::vector<std::string>{"cpu-staged:0", "cpu-staged:1", "cpu-staged:2"}));
}

}  // namespace
}  // namespace ranklab
