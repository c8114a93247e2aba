#include "tests/mpi/mpi_test_support.hpp"

#include <gtest/gtest.h>

#include "tests/support/cluster_fixture.hpp"

namespace ranklab::testing {
namespace {
MpiSession* g_session = nullptr;
}

void set_session(MpiSession& session) { g_session = &session; }
MpiSession& session() { return *g_session; }

void run_on_emulator(const std::function<void(Communicator&)>& program) {
  ClusterOptions options;
  options.world_size = session().size();
  expect_run_ok(options, program);
}

}  // namespace ranklab::testing
