// The model on a device other than the host (issue 13): the TP/PP/DP step on cpu-staged
// (and cuda where built) against the same step on cpu. cpu-staged runs the same kernels on
// tensors in memory of its own, so its results are cpu's bit for bit; its communication is
// cpu's too, plus one staging copy each way per communicated tensor.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <ostream>

#include "model/device.hpp"
#include "model/parallel_step.hpp"
#include "tests/model/device_test_support.hpp"
#include "tests/model/parallel_test_support.hpp"
#include "tests/support/staging_copies.hpp"

namespace ranklab {
namespace {

using testing::staging_of;

using testing::JobOptions;
using testing::run_job;

const ModelShape kShape{.batch = 2, .seq = 4, .hidden = 8, .inter = 16, .layers = 4};

struct DeviceParam {
  DeviceKind device = DeviceKind::cpu_staged;
  ParallelConfig config;
  StepOptions step;
  Algorithm algorithm = Algorithm::direct;
  bool f64 = false;

  std::string name() const {
    return fmt::format("{}_tp{}pp{}dp{}_{}_m{}_v{}_{}_{}_{}", testing::device_test_name(device),
                       config.tp, config.pp, config.dp,
                       step.schedule == ScheduleKind::one_f_one_b
                           ? std::string("onefoneb")
                           : std::string(to_string(step.schedule)),
                       step.microbatches, step.virtual_stages,
                       step.tp_comm == TpComm::sequence_parallel ? "sp" : "allreduce",
                       to_string(algorithm) == "recursive-doubling" ? "rd"
                                                                    : std::string(to_string(algorithm)),
                       f64 ? "f64" : "f32");
  }
  friend void PrintTo(const DeviceParam& p, std::ostream* os) { *os << p.name(); }
};

// The compute events of `work` that are computation, not staging copies.
ComputeWork without_staging(const ComputeWork& work) {
  ComputeWork out;
  for (const ComputeItem& item : work.items) {
    if (!item.staging()) out.add(item);
  }
  if (work.items.empty()) out = work;
  return out;
}

// What a rank's communication stages: one copy to the host per call that sends data, one
// back to the device per call that receives data, with their bytes (from a trace of
// `direct` calls, one event per call).
struct Expected {
  std::uint64_t to_host = 0, to_device = 0, to_host_bytes = 0, to_device_bytes = 0;
};
Expected expected_staging(const std::vector<TraceEvent>& events, const Trace& trace) {
  Expected out;
  for (const TraceEvent& e : events) {
    const std::uint64_t members = trace.header.groups[e.group].ranks.size();
    const auto stage = [&out](std::uint64_t in, std::uint64_t back) {
      if (in > 0) ++out.to_host, out.to_host_bytes += in;
      if (back > 0) ++out.to_device, out.to_device_bytes += back;
    };
    switch (e.op) {
      case OpKind::send: stage(e.bytes, 0); break;
      case OpKind::recv: stage(0, e.bytes); break;
      case OpKind::all_reduce: stage(e.bytes, e.bytes); break;
      case OpKind::all_gather: stage(e.bytes, e.bytes * members); break;
      case OpKind::reduce_scatter: stage(e.bytes * members, e.bytes); break;
      default: ADD_FAILURE() << "the step made a " << to_string(e.op);
    }
  }
  return out;
}

class DeviceStepTest : public ::testing::TestWithParam<DeviceParam> {
 protected:
  template <typename Scalar>
  void run_and_compare() {
    const DeviceParam& p = GetParam();
    RANKLAB_SKIP_UNLESS_DEVICE(p.device);
    const Problem<Scalar> problem = make_problem<Scalar>(kShape, p.config.dp, 7);
    const JobOptions host{.algorithm = p.algorithm, .step = p.step};
    JobOptions staged = host;
    staged.device = p.device;
    const auto cpu = run_job<Scalar>(p.config, problem, host);
    const auto dev = run_job<Scalar>(p.config, problem, staged);
    ASSERT_TRUE(testing::run_ok(cpu.report));
    ASSERT_TRUE(testing::run_ok(dev.report));
    // The calls the step makes, one event each: those of `direct` (another algorithm's
    // trace shows a collective as its messages, and the call is what is staged).
    const auto calls = p.algorithm == Algorithm::direct
                           ? cpu
                           : run_job<Scalar>(p.config, problem, {.step = p.step});

    ASSERT_EQ(cpu.results.size(), dev.results.size());
    for (std::size_t r = 0; r < cpu.results.size(); ++r) {
      const RankResult<Scalar>& a = cpu.results[r];
      const RankResult<Scalar>& b = dev.results[r];
      // Bit for bit (cpu-staged; a GPU's GEMMs would need the tolerance of the README).
      EXPECT_EQ(a.loss, b.loss) << "rank " << r;
      EXPECT_EQ(a.output, b.output) << "rank " << r;
      ASSERT_EQ(a.grads.size(), b.grads.size());
      for (std::size_t l = 0; l < a.grads.size(); ++l) {
        EXPECT_TRUE(a.grads[l].w1 == b.grads[l].w1 && a.grads[l].b1 == b.grads[l].b1 &&
                    a.grads[l].w2 == b.grads[l].w2 && a.grads[l].b2 == b.grads[l].b2)
            << "rank " << r << " layer " << l;
      }
      // The same communication events, field for field, once the staging copies are
      // taken out; cpu has none.
      const auto& cpu_events = cpu.trace.ranks[r];
      const auto& dev_events = dev.trace.ranks[r];
      EXPECT_TRUE(staging_of(cpu_events).empty()) << "rank " << r;
      ASSERT_EQ(cpu_events.size(), dev_events.size()) << "rank " << r;
      for (std::size_t k = 0; k < cpu_events.size(); ++k) {
        TraceEvent e = dev_events[k];
        e.compute = without_staging(e.compute);
        e.compute_after = without_staging(e.compute_after);
        EXPECT_EQ(e, cpu_events[k]) << "rank " << r << " event " << k;
      }
      // Exactly one copy each way per communicated tensor, on the rank's own device.
      const std::vector<ComputeItem> copies = staging_of(dev_events);
      Expected got;
      for (const ComputeItem& c : copies) {
        EXPECT_EQ(c.device, (DeviceId{p.device, static_cast<int>(r)}.name()));
        if (c.copy == StagingCopy::to_host) ++got.to_host, got.to_host_bytes += c.bytes;
        if (c.copy == StagingCopy::to_device) ++got.to_device, got.to_device_bytes += c.bytes;
      }
      const Expected want = expected_staging(calls.trace.ranks[r], calls.trace);
      EXPECT_EQ(got.to_host, want.to_host) << "rank " << r;
      EXPECT_EQ(got.to_device, want.to_device) << "rank " << r;
      EXPECT_EQ(got.to_host_bytes, want.to_host_bytes) << "rank " << r;
      EXPECT_EQ(got.to_device_bytes, want.to_device_bytes) << "rank " << r;
    }
  }
};

//! The step on a staged device: cpu's losses, outputs and gradients bit for bit, cpu's
//! communication events, and one staging copy each way per communicated tensor.
TEST_P(DeviceStepTest, SameResultsAndEventsAsCpuPlusStaging) {
  if (GetParam().f64) {
    run_and_compare<double>();
  } else {
    run_and_compare<float>();
  }
}

std::vector<DeviceParam> device_params() {
  const ParallelConfig hybrid{.tp = 2, .pp = 2, .dp = 2};
  const StepOptions gpipe{.schedule = ScheduleKind::gpipe, .microbatches = 2};
  const StepOptions one_f_one_b{.schedule = ScheduleKind::one_f_one_b, .microbatches = 2};
  const StepOptions interleaved{
      .schedule = ScheduleKind::interleaved, .microbatches = 2, .virtual_stages = 2};
  const StepOptions sp{.tp_comm = TpComm::sequence_parallel};
  std::vector<DeviceParam> out;
  for (const DeviceKind device : {DeviceKind::cpu_staged, DeviceKind::cuda}) {
    out.push_back({device, hybrid});
    out.push_back({device, hybrid, {}, Algorithm::direct, true});
    out.push_back({device, hybrid, gpipe});
    out.push_back({device, hybrid, one_f_one_b, Algorithm::direct, true});
    out.push_back({device, hybrid, interleaved});
    out.push_back({device, hybrid, sp, Algorithm::direct, true});
    out.push_back({device, hybrid, {}, Algorithm::ring});
    out.push_back({device, {.tp = 2, .pp = 1, .dp = 4}, {}, Algorithm::recursive_doubling, true});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Devices, DeviceStepTest, ::testing::ValuesIn(device_params()),
                         [](const auto& param_info) { return param_info.param.name(); });

//! The device interface's kernels on cpu-staged are cpu's (model/layer.hpp), and tensors
//! cross the device's edge by copies into memory of their own.
TEST(ModelDeviceTest, CpuStagedKernelsAndCopies) {
  const auto staged = make_model_device<double>({DeviceKind::cpu_staged, 3});
  EXPECT_EQ(staged->id().name(), "cpu-staged:3");
  ASSERT_NE(staged->memory(), nullptr);
  EXPECT_EQ(cpu_device<double>().memory(), nullptr);
  const Matrix<double> z = Matrix<double>::Random(3, 5);
  EXPECT_EQ(staged->gelu(z), gelu<double>(z));
  EXPECT_EQ(staged->gelu_grad(z), gelu_grad<double>(z));
  const Matrix<double> t = Matrix<double>::Random(3, 5);
  EXPECT_EQ(staged->mse_loss_part(z, t, 15), mse_loss<double>(z, t));
  const Matrix<double> on_device = staged->upload(Matrix<double>(z));
  EXPECT_EQ(on_device, z);
  EXPECT_NE(on_device.data(), z.data());
  Matrix<double> halves = z;
  staged->divide({halves.data(), static_cast<std::size_t>(halves.size())}, 2.0);
  EXPECT_EQ(halves, Matrix<double>(z / 2.0));
}

//! --device cuda on a build without CUDA fails with one line naming that.
TEST(ModelDeviceTest, CudaWithoutCudaBuildIsNamed) {
  if (cuda_built()) GTEST_SKIP() << "this build has CUDA";
  try {
    (void)make_model_device<float>({DeviceKind::cuda, 0});
    ADD_FAILURE() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("built without CUDA"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)parse_device_kind("tpu"), UsageError);
}

}  // namespace
}  // namespace ranklab
