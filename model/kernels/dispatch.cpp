#include "model/kernels/dispatch.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cstdlib>

#include "traces/error.hpp"

// Which ISA units this build compiled (model/CMakeLists.txt defines them): none but the
// baseline unless said.
#ifndef RANKLAB_KERNELS_AVX2
#define RANKLAB_KERNELS_AVX2 0
#endif
#ifndef RANKLAB_KERNELS_AVX512
#define RANKLAB_KERNELS_AVX512 0
#endif

namespace ranklab::kernels {
namespace {

constexpr Isa kAll[] = {Isa::baseline, Isa::avx2, Isa::avx512};

const KernelSet& kernels_of(Isa isa) {
  switch (isa) {
#if RANKLAB_KERNELS_AVX2
    case Isa::avx2:
      return avx2_kernels();
#endif
#if RANKLAB_KERNELS_AVX512
    case Isa::avx512:
      return avx512_kernels();
#endif
    default:
      return baseline_kernels();
  }
}

std::string names(const std::vector<Isa>& isas) {
  std::string out;
  for (const Isa isa : isas) {
    if (!out.empty()) out += ", ";
    out += to_string(isa);
  }
  return out;
}

// Null until the first kernel call resolves RANKLAB_ISA; then never null again.
std::atomic<const KernelSet*> active{nullptr};

}  // namespace

std::string_view to_string(Isa isa) {
  switch (isa) {
    case Isa::avx2:
      return "avx2";
    case Isa::avx512:
      return "avx512";
    default:
      return "baseline";
  }
}

bool compiled(Isa isa) {
  switch (isa) {
    case Isa::avx2:
      return RANKLAB_KERNELS_AVX2 != 0;
    case Isa::avx512:
      return RANKLAB_KERNELS_AVX512 != 0;
    default:
      return true;
  }
}

bool cpu_supports(Isa isa) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  // libgcc's feature bits include the operating system's consent (XGETBV) for AVX state.
  switch (isa) {
    case Isa::avx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case Isa::avx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("fma");
    default:
      return true;
  }
#else
  return isa == Isa::baseline;
#endif
}

std::vector<Isa> available_isas() {
  std::vector<Isa> out;
  for (const Isa isa : kAll) {
    if (compiled(isa) && cpu_supports(isa)) out.push_back(isa);
  }
  return out;
}

Isa resolve_isa(const char* value) {
  const std::vector<Isa> available = available_isas();
  const std::string_view wanted = value == nullptr ? "auto" : value;
  if (wanted == "auto" || wanted.empty()) return available.back();
  for (const Isa isa : kAll) {
    if (wanted != to_string(isa)) continue;
    if (!compiled(isa)) {
      throw UsageError(fmt::format("RANKLAB_ISA={}: this build has no {} kernels (it has: {})",
                                   wanted, wanted, names(available)));
    }
    if (!cpu_supports(isa)) {
      throw UsageError(fmt::format("RANKLAB_ISA={}: this CPU cannot run {} (it can: {})", wanted,
                                   wanted, names(available)));
    }
    return isa;
  }
  throw UsageError(fmt::format(
      "RANKLAB_ISA={}: unknown instruction set (expected auto, baseline, avx2 or avx512)", wanted));
}

const KernelSet& active_kernels() {
  const KernelSet* set = active.load(std::memory_order_acquire);
  if (set == nullptr) {
    // Threads that race here resolve the same variable to the same set.
    set = &kernels_of(resolve_isa(std::getenv("RANKLAB_ISA")));
    active.store(set, std::memory_order_release);
  }
  return *set;
}

Isa active_isa() {
  const std::string_view name = active_kernels().isa;
  for (const Isa isa : kAll) {
    if (name == to_string(isa)) return isa;
  }
  return Isa::baseline;
}

void use_isa(Isa isa) {
  if (!compiled(isa) || !cpu_supports(isa)) {
    throw UsageError(fmt::format("kernels: {} is not available here (available: {})",
                                 to_string(isa), names(available_isas())));
  }
  active.store(&kernels_of(isa), std::memory_order_release);
}

}  // namespace ranklab::kernels
