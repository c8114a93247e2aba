// Helpers shared by the model tests: message assertions, tolerances, temporary
// directories and the location of the PyTorch golden sets shipped in tests/reference.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "model/kernels/dispatch.hpp"
#include "model/tensor.hpp"
#include "tests/support/temp_dir.hpp"  // TempDir, for the tests that write files

// Expects `statement` to throw `Type` whose what() contains `substring` (fmt's gtest-extra
// idea): error messages are part of the interface.
#define EXPECT_THROW_MSG(statement, Type, substring)                                   \
  do {                                                                                 \
    try {                                                                              \
      statement;                                                                       \
      ADD_FAILURE() << "expected " #Type " containing \"" << (substring) << "\"";      \
    } catch (const Type& error_) {                                                     \
      EXPECT_NE(std::string(error_.what()).find(substring), std::string::npos)         \
          << "message: " << error_.what() << "\nexpected to contain: " << (substring); \
    }                                                                                  \
  } while (false)

namespace ranklab::testing {

/// The golden sets that tests/reference/torch_reference.py writes (`regenerate`), shipped
/// with the project so that every clone checks ranklab against PyTorch. A missing file is a
/// failure (load_golden throws), never a skip.
inline std::filesystem::path golden_root() {
  return std::filesystem::path(RANKLAB_SOURCE_DIR) / "tests" / "reference" / "golden";
}

/// The seed's configuration: TP2 PP2 DP2, B8 S16 H32 I64 L4, seed 0, float32 and float64.
inline std::filesystem::path golden_dir() {
  return golden_root() / "tp2pp2dp2_b8s16h32i64l4_seed0";
}

/// Every shipped set (torch_reference.py's SHIPPED): the seed's, a 24-rank TP4 PP2 DP3, and
/// TP, PP and DP alone, each with its own shape and seed.
inline std::vector<std::filesystem::path> shipped_golden_dirs() {
  std::vector<std::filesystem::path> dirs;
  for (const char* name : {"tp2pp2dp2_b8s16h32i64l4_seed0", "tp4pp2dp3_b2s3h8i16l2_seed1",
                           "tp2pp1dp1_b2s4h8i16l2_seed2", "tp1pp4dp1_b2s3h6i12l4_seed3",
                           "tp1pp1dp4_b1s5h4i8l2_seed4"}) {
    dirs.push_back(golden_root() / name);
  }
  return dirs;
}

/// Computes with `isa`'s dense kernels until the end of the scope, then with the ones in use
/// before (model/kernels/dispatch.hpp).
class ScopedIsa {
 public:
  explicit ScopedIsa(kernels::Isa isa) : before_(kernels::active_isa()) { kernels::use_isa(isa); }
  ~ScopedIsa() { kernels::use_isa(before_); }
  ScopedIsa(const ScopedIsa&) = delete;
  ScopedIsa& operator=(const ScopedIsa&) = delete;

 private:
  kernels::Isa before_;
};

/// max |a - b| over all elements, in double.
template <typename A, typename B>
double max_abs_diff(const A& a, const B& b) {
  if (a.size() == 0) return 0.0;
  return (a.template cast<double>() - b.template cast<double>()).cwiseAbs().maxCoeff();
}

/// max |a| over all elements, in double.
template <typename A>
double max_abs(const A& a) {
  return a.size() == 0 ? 0.0 : a.template cast<double>().cwiseAbs().maxCoeff();
}

}  // namespace ranklab::testing
