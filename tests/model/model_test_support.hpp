// Helpers shared by the model tests: message assertions, tolerances, temporary
// directories and the location of the PyTorch golden set.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <string>

#include "model/tensor.hpp"

#ifndef RANKLAB_SHARED_DIR
#define RANKLAB_SHARED_DIR ""
#endif

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

/// The golden set exported by shared/reference/torch/parallel_reference.py for the seed
/// configuration (TP2 PP2 DP2, B8 S16 H32 I64 L4, float32 and float64).
inline std::filesystem::path golden_dir() {
  return std::filesystem::path(RANKLAB_SHARED_DIR) / "reference" / "torch" / "golden" /
         "a_tp2pp2dp2_b8s16h32i64l4_f32_f64";
}

/// Skips the current test (from the test body) when the golden set is not there.
#define RANKLAB_REQUIRE_GOLDEN()                                                    \
  if (!std::filesystem::exists(::ranklab::testing::golden_dir() / "manifest.json")) \
  GTEST_SKIP() << "golden set not found at " << ::ranklab::testing::golden_dir()    \
               << " (RANKLAB_SHARED_DIR=\"" RANKLAB_SHARED_DIR "\")"

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

/// A fresh directory under the system temp directory, removed with its contents at scope end.
class TempDir {
 public:
  explicit TempDir(const std::string& tag) {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("ranklab_model_" + tag + "_" + std::to_string(::getpid()) + "_" +
             std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace ranklab::testing
