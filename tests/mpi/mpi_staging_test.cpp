// Device buffers on MPI processes (issue 13): the Communicator stages them through host
// memory whatever the backend, so a cpu-staged buffer all_reduces and travels by message as
// a host buffer does.
#include <gtest/gtest.h>

#include <vector>

#include "comm/device.hpp"
#include "tests/mpi/mpi_test_support.hpp"

namespace ranklab::testing {
namespace {

//! An all_reduce (direct and ring) and a message on cpu-staged buffers give the host results;
//! a receive copies back only what arrived.
TEST(MpiStaging, DeviceBuffersAreStagedThroughHost) {
  Communicator world = session().world();
  EXPECT_EQ(world.device().kind, DeviceKind::cpu);  // the session's default device
  const CpuStagedMemory memory(world.rank());
  const int n = world.size();
  for (const Algorithm algorithm : {Algorithm::direct, Algorithm::ring}) {
    std::vector<double> data(5, world.rank() + 1.0);
    world.all_reduce(MutableBuffer{data.data(), data.size(), DataType::f64, &memory},
                     {.algorithm = algorithm});
    EXPECT_EQ(data, std::vector<double>(5, n * (n + 1) / 2.0)) << to_string(algorithm);
  }
  if (n < 2) return;
  if (world.rank() == 0) {
    std::vector<float> out = {1, 2, 3};
    world.send(ConstBuffer{out.data(), out.size(), DataType::f32, &memory}, 1, 4);
  } else if (world.rank() == 1) {
    std::vector<float> in(5, -1.0f);
    const RecvStatus status =
        world.recv(MutableBuffer{in.data(), in.size(), DataType::f32, &memory}, 0, 4);
    EXPECT_EQ(status.count, 3u);
    EXPECT_EQ(in, (std::vector<float>{1, 2, 3, -1, -1}));
  }
  world.barrier();
}

}  // namespace
}  // namespace ranklab::testing
