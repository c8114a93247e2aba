// `ranklab run --device` end to end (issue 13): cpu-staged passes every check of the main
// job with cpu's bits (the same trace operations, the same saved gradients), its staging
// copies show in `ranklab stats`, and a device this build lacks is one line and exit 1.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/cli/cli_support.hpp"
#include "tests/support/temp_dir.hpp"

namespace ranklab::testing {
namespace {

//! The main job on cpu-staged: every check passes, the trace's operations are cpu's
//! (ranklab diff: identical), stats counts its staging copies, and --save writes cpu's
//! gradients byte for byte (they were copied back from the device).
TEST(DeviceCliTest, CpuStagedRunsTheMainJobWithCpusResults) {
  TempDir cwd("ranklab_cli_device");
  const Result cpu = ranklab({"run", "--trace", "cpu.jsonl", "--save", "cpu_golden"}, cwd.path());
  ASSERT_EQ(cpu.code, 0) << show(cpu);
  const Result staged = ranklab(
      {"run", "--device", "cpu-staged", "--trace", "staged.jsonl", "--save", "staged_golden"},
      cwd.path());
  ASSERT_EQ(staged.code, 0) << show(staged);
  EXPECT_TRUE(has(staged, "device cpu-staged (communication staged through host buffers)"));
  EXPECT_TRUE(has(staged, "result: ok: 8 ranks finished; every check passed"));

  const Result diff = ranklab({"diff", "cpu.jsonl", "staged.jsonl"}, cwd.path());
  EXPECT_EQ(diff.code, 0) << show(diff);
  const Result stats = ranklab({"stats", "staged.jsonl"}, cwd.path());
  ASSERT_EQ(stats.code, 0) << show(stats);
  // The seed's step over 8 ranks: 92 all_reduces and 8 sends copy to the host, the 92
  // all_reduces and 8 receives copy back (the bytes of `traffic per group kind`).
  EXPECT_TRUE(has(stats, "staging: 100 copies device->host (724992 B), 100 copies host->device "
                         "(724992 B)"));
  const Result cpu_stats = ranklab({"stats", "cpu.jsonl"}, cwd.path());
  EXPECT_EQ(cpu_stats.out.find("staging:"), std::string::npos) << show(cpu_stats);

  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(cwd / "cpu_golden")) {
    const std::filesystem::path twin = cwd / "staged_golden" / entry.path().filename();
    ASSERT_TRUE(std::filesystem::exists(twin)) << twin;
    if (entry.path().extension() == ".npy") {
      EXPECT_EQ(read_file(entry.path()), read_file(twin)) << entry.path().filename();
      ++files;
    }
  }
  EXPECT_GT(files, 0u);
}

//! --device cuda on a build without CUDA, and an unknown device: one line, exit 1.
TEST(DeviceCliTest, UnavailableDevicesAreOneLine) {
  TempDir cwd("ranklab_cli_device_bad");
  expect_usage_error(ranklab({"run", "--device", "cuda"}, cwd.path()),
                     "--device cuda: this ranklab was built without CUDA");
  expect_usage_error(ranklab({"run", "--device", "tpu"}, cwd.path()),
                     "--device: unknown device 'tpu' (known: cpu, cpu-staged, cuda)");
}

}  // namespace
}  // namespace ranklab::testing
