// The dense forward+backward of the seed model against the machine's FLOP rate (issue 8 §2).
//
//   BM_DenseStep     dense_data_parallel: both DP replicas' forward, MSE loss and backward
//                    through the 4 layers, gradients averaged (the reference every parallel
//                    run is checked against), float32, steady state (storage reused)
//   BM_SeedMatmuls   the same step's matrix products alone, same shapes and storage order
//                    (row-major, as model/layer.cpp computes them): per replica and layer
//                    x·W1ᵀ and a·W2ᵀ forward, dyᵀ·a, dy·W2, dz1ᵀ·x and dz1·W1 backward (no dx
//                    for layer 0). This is "the machine's measured FLOP rate for these shapes".
//   BM_Gemm          one square float32 product of size n: Eigen's rate on large operands
//
// The `flops` counter is FLOP per second, counting 2·m·n·k per product; BM_DenseStep counts
// the same products, so its rate against BM_SeedMatmuls' is the share of the step spent
// outside them (GELU's erf and exp, biases, the loss, copies). All on one thread (Eigen runs
// products single-threaded unless built with OpenMP, which this project is not).
//
//   BM_DenseStep/isa:NAME   BM_DenseStep on the kernels of one instruction set, for each this
//                    binary has and this CPU runs (model/kernels/dispatch.hpp); BM_DenseStep
//                    itself uses the ones the dispatcher picks (RANKLAB_ISA, default auto).
//                    --benchmark_enable_random_interleaving=true alternates them in one run.
//
// The target is built twice: dense_bench with the project's flags (the kernels dispatched at
// run time), and dense_bench_native (EXCLUDE_FROM_ALL; `ninja dense_bench_native`) with
// -march=native, compiled from the model sources it needs, to say how far dispatch is from
// native code generation (bench/RESULTS.md).
#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "model/dense_model.hpp"
#include "model/init.hpp"
#include "model/kernels/dispatch.hpp"
#include "model/layer.hpp"
#include "model/shape.hpp"

namespace ranklab::bench {
namespace {

constexpr int kReplicas = 2;  // the seed's DP degree

// FLOPs of the step's matrix products (forward 2, backward 4 per layer, no dx for layer 0).
double seed_step_flops(const ModelShape& s) {
  const double n = static_cast<double>(s.rows());
  const double h = static_cast<double>(s.hidden);
  const double i = static_cast<double>(s.inter);
  const double per_product = 2.0 * n * h * i;  // every product here is [n,h]x[h,i] or alike
  const double products = 6.0 * static_cast<double>(s.layers) - 1.0;
  return kReplicas * products * per_product;
}

struct SeedData {
  ModelShape shape;
  std::vector<LayerParams<float>> layers = default_layers<float>(shape);
  std::vector<Matrix<float>> inputs, targets;
  SeedData() {
    for (int d = 0; d < kReplicas; ++d) {
      inputs.push_back(default_inputs<float>(shape, static_cast<std::uint64_t>(d)));
      targets.push_back(default_targets<float>(shape, static_cast<std::uint64_t>(d)));
    }
  }
};

const SeedData& seed_data() {
  static const SeedData data;
  return data;
}

void set_flops(benchmark::State& state, double flops_per_iteration) {
  state.counters["flops"] =
      benchmark::Counter(flops_per_iteration, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_DenseStep(benchmark::State& state) {
  const SeedData& data = seed_data();
  StackCache<float> cache;
  DataParallelResult<float> out;
  for (auto _ : state) {
    dense_data_parallel<float>(data.layers, data.inputs, data.targets, cache, out);
    benchmark::DoNotOptimize(out.grads.data());
    benchmark::ClobberMemory();
  }
  set_flops(state, seed_step_flops(data.shape));
}

// BM_DenseStep on one ISA's kernels; the dispatcher's choice is restored afterwards.
void dense_step_on(benchmark::State& state, kernels::Isa isa) {
  const kernels::Isa chosen = kernels::active_isa();
  kernels::use_isa(isa);
  BM_DenseStep(state);
  kernels::use_isa(chosen);
}

void BM_SeedMatmuls(benchmark::State& state) {
  const SeedData& data = seed_data();
  const ModelShape& s = data.shape;
  const auto n = static_cast<Eigen::Index>(s.rows());
  const auto h = static_cast<Eigen::Index>(s.hidden);
  const auto i = static_cast<Eigen::Index>(s.inter);
  // Operands of the products, with the shapes layer.cpp gives them.
  Matrix<float> x = data.inputs[0], dy = data.targets[0];
  Matrix<float> z1(n, i), a = Matrix<float>::Constant(n, i, 0.5f), y(n, h), dx(n, h);
  Matrix<float> dz1 = Matrix<float>::Constant(n, i, 0.25f);
  std::vector<LayerGrads<float>> grads(data.layers.size(), LayerGrads<float>::zeros(h, i));
  for (auto _ : state) {
    for (int d = 0; d < kReplicas; ++d) {
      for (std::size_t l = 0; l < data.layers.size(); ++l) {
        const LayerParams<float>& p = data.layers[l];
        z1.noalias() = x * p.w1.transpose();
        y.noalias() = a * p.w2.transpose();
        grads[l].w2.noalias() = dy.transpose() * a;
        z1.noalias() = dy * p.w2;
        grads[l].w1.noalias() = dz1.transpose() * x;
        if (l != 0) dx.noalias() = dz1 * p.w1;
      }
    }
    benchmark::DoNotOptimize(z1.data());
    benchmark::DoNotOptimize(y.data());
    benchmark::DoNotOptimize(dx.data());
    benchmark::ClobberMemory();
  }
  set_flops(state, seed_step_flops(s));
}

void BM_Gemm(benchmark::State& state) {
  const auto n = static_cast<Eigen::Index>(state.range(0));
  const Matrix<float> a = Matrix<float>::Constant(n, n, 0.5f);
  const Matrix<float> b = Matrix<float>::Constant(n, n, 0.25f);
  Matrix<float> c(n, n);
  for (auto _ : state) {
    c.noalias() = a * b;
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  const double dn = static_cast<double>(n);
  set_flops(state, 2.0 * dn * dn * dn);
}

BENCHMARK(BM_DenseStep);
BENCHMARK(BM_SeedMatmuls);
BENCHMARK(BM_Gemm)->ArgName("n")->Arg(64)->Arg(512);

void register_isa_benchmarks() {
  for (const kernels::Isa isa : kernels::available_isas()) {
    const std::string name = "BM_DenseStep/isa:" + std::string(kernels::to_string(isa));
    benchmark::RegisterBenchmark(name.c_str(), dense_step_on, isa);
  }
}

}  // namespace
}  // namespace ranklab::bench

int main(int argc, char** argv) {
  ranklab::bench::register_isa_benchmarks();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("kernels", std::string(ranklab::kernels::active_kernels().isa));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
