// The cluster configurations tests are parameterized over (world size, scheduling policy,
// worker threads), their readable gtest names, and small helpers shared by the emulator
// and CLI suites.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <ostream>
#include <string>
#include <vector>

#include "emulator/options.hpp"
#include "tests/support/cluster_fixture.hpp"

namespace ranklab::testing {

/// One cluster configuration: world size, policy text (as --policy takes it), threads.
struct ClusterParam {
  int world = 1;
  std::string policy = "rank-order";
  int threads = 1;

  /// The options of this configuration. The watchdog is shorter than ctest's timeout, so a
  /// test that hangs because of a bug fails with a report instead of being killed.
  ClusterOptions options() const {
    ClusterOptions o;
    o.world_size = world;
    o.policy = SchedulePolicy::parse(policy);
    o.threads = threads;
    o.timeout = std::chrono::milliseconds(20'000);
    return o;
  }

  /// `w13_pct_11_3_t2`.
  std::string name() const {
    return "w" + std::to_string(world) + "_" + policy_name(policy) + "_t" + std::to_string(threads);
  }

  friend void PrintTo(const ClusterParam& p, std::ostream* os) { *os << p.name(); }
};

inline const std::vector<int> kWorlds = {1, 2, 3, 8, 13, 64};
inline const std::vector<std::string> kPolicies = {"rank-order", "random:7", "pct:11:3"};
inline const std::vector<int> kThreads = {1, 2};

/// Every combination of `worlds` x kPolicies x kThreads.
inline std::vector<ClusterParam> cluster_params(const std::vector<int>& worlds = kWorlds) {
  std::vector<ClusterParam> out;
  for (int w : worlds) {
    for (const auto& p : kPolicies) {
      for (int t : kThreads) out.push_back({w, p, t});
    }
  }
  return out;
}

/// The worlds of kWorlds with at least `min` ranks.
inline std::vector<int> worlds_from(int min) {
  std::vector<int> out;
  for (int w : kWorlds) {
    if (w >= min) out.push_back(w);
  }
  return out;
}

/// gtest name generator for ClusterParam suites.
struct ParamName {
  std::string operator()(const ::testing::TestParamInfo<ClusterParam>& info) const {
    return info.param.name();
  }
};

/// Fails the current test with the report of a run that should have succeeded.
inline ::testing::AssertionResult run_ok(const RunReport& report) {
  if (report.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << report.summary << "\n" << report.details;
}

/// Whether `text` contains `part`, with both shown on failure.
inline ::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "expected to find\n  " << part << "\nin\n" << text;
}

}  // namespace ranklab::testing
