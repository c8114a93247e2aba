// Spawns ranks on a cluster and fails the test with the first rank's own message (gloo's
// BaseTest::spawn). No test starts its own threads.
#pragma once

#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "collectives/cluster.hpp"

namespace ranklab::testing {

/// Runs `fn` on every rank with a world Communicator; returns the report.
inline RunReport run_ranks(ClusterOptions options, const std::function<void(Communicator&)>& fn,
                           Algorithm algorithm = Algorithm::direct) {
  Cluster cluster(std::move(options), algorithm);
  return cluster.run(fn);
}

/// Like run_ranks, and asserts that the run succeeded, printing the report if not.
inline void expect_run_ok(ClusterOptions options, const std::function<void(Communicator&)>& fn,
                          Algorithm algorithm = Algorithm::direct) {
  const RunReport report = run_ranks(std::move(options), fn, algorithm);
  EXPECT_EQ(report.status, RunStatus::ok) << report.summary << "\n" << report.details;
}

/// `w8_random:3_t2`: readable parameter names.
inline std::string policy_name(const std::string& policy) {
  std::string out;
  for (char c : policy) out += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  return out;
}

}  // namespace ranklab::testing
