// Which instruction set the dense layer kernels use (layer_kernels.hpp): chosen once per
// process, the best one this binary has kernels for and this CPU runs, unless RANKLAB_ISA
// says otherwise:
//
//   RANKLAB_ISA=auto       the default: avx512, else avx2, else baseline
//   RANKLAB_ISA=baseline   the kernels at the build's own flags (x86-64 by default)
//   RANKLAB_ISA=avx2       AVX2 + FMA       (an error where the CPU lacks it)
//   RANKLAB_ISA=avx512     AVX-512 F/DQ/VL/BW
//
// Determinism: every rank, thread and policy of a process computes with the same kernels, so
// a run's bits (and its trace's payload hashes) are the same on one machine whatever the
// policy. Two machines whose CPUs pick different kernels may differ in the last bits (fused
// multiply-adds, wider reductions); RANKLAB_ISA=baseline on both makes them agree.
#pragma once

#include <string_view>
#include <vector>

#include "model/kernels/layer_kernels.hpp"

namespace ranklab::kernels {

enum class Isa { baseline, avx2, avx512 };

/// "baseline", "avx2" or "avx512".
std::string_view to_string(Isa isa);

/// Whether this binary was built with kernels for `isa` (baseline always).
bool compiled(Isa isa);

/// Whether this CPU (and its operating system) can run `isa`'s instructions.
bool cpu_supports(Isa isa);

/// The ISAs this process can use: compiled and supported, baseline first, best last.
std::vector<Isa> available_isas();

/// The ISA RANKLAB_ISA asks for (`value`: the variable's text; null or "auto": the best
/// available). Throws UsageError naming the variable for an unknown name or an ISA this
/// binary or CPU lacks.
Isa resolve_isa(const char* value);

/// The kernels in use; the first call resolves RANKLAB_ISA (and throws as resolve_isa does).
const KernelSet& active_kernels();

/// The ISA of active_kernels().
Isa active_isa();

/// For tests and benchmarks that compare ISAs in one process: use `isa` from now on. Throws
/// UsageError if it is not available. Never while a run computes (its ranks would mix kernels).
void use_isa(Isa isa);

}  // namespace ranklab::kernels
