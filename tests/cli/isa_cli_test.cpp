// RANKLAB_ISA from the command line's side: it picks the dense kernels of a `ranklab` run
// (model/kernels/dispatch.hpp), and a bad value is one usage error before anything runs.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "tests/cli/cli_support.hpp"

namespace ranklab::testing {
namespace {

// Sets an environment variable (inherited by the `ranklab` the test starts) for a scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~ScopedEnv() { ::unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

//! The main job (the seed step and its checks against the dense reference) passes on the
//! baseline kernels forced through RANKLAB_ISA, and says which kernels it used.
TEST(IsaCliTest, BaselineKernelsFromTheEnvironment) {
  const ScopedEnv env("RANKLAB_ISA", "baseline");
  const Result r = ranklab({"--log-level", "info", "run", "--no-trace"});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_NE(r.err.find("[info] dense kernels: baseline"), std::string::npos) << show(r);
}

//! Without RANKLAB_ISA the best available kernels run, and the log names them.
TEST(IsaCliTest, AutoByDefault) {
  ::unsetenv("RANKLAB_ISA");
  const Result r = ranklab({"--log-level", "info", "run", "--no-trace"});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_NE(r.err.find("[info] dense kernels: "), std::string::npos) << show(r);
}

//! An unknown instruction set is one line naming the variable, exit 1, nothing run.
TEST(IsaCliTest, UnknownIsaIsAUsageError) {
  const ScopedEnv env("RANKLAB_ISA", "sse9");
  expect_usage_error(ranklab({"run", "--no-trace"}),
                     "RANKLAB_ISA=sse9: unknown instruction set (expected auto, baseline, avx2 or "
                     "avx512)");
}

}  // namespace
}  // namespace ranklab::testing
