#!/usr/bin/env bash
# README's second command: set up, build, and run the whole test suite. With CI=true it
# also runs the suite under UndefinedBehaviorSanitizer, the fiber-free suites under
# AddressSanitizer, and the libFuzzer targets (trace reader, TI importer) for a bounded time.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TEST_PACKAGES=true source "$ROOT/scripts/setup.sh"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$(nproc)"

if [ "${CI:-}" = "true" ]; then
  # The whole suite under UndefinedBehaviorSanitizer.
  BUILD_DIR="$ROOT/build-ubsan" RANKLAB_CMAKE_ARGS="-DRANKLAB_SANITIZE=undefined -DRANKLAB_BUILD_BENCH=OFF" \
    configure_and_build
  # Without the PyTorch bridge's script runs (label torch): their C++ is the bridge's
  # coordinator, which the plain run covers, and each of their processes imports torch.
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir "$ROOT/build-ubsan" --output-on-failure -j"$(nproc)" -LE torch
  # AddressSanitizer only where no rank fibers run (label nofibers): Boost.Fiber switches
  # stacks without telling ASan (Debian's Boost is not built with BOOST_USE_ASAN), so an
  # exception unwinding a fiber's stack is misreported as a stack-buffer error. See README.
  BUILD_DIR="$ROOT/build-asan" RANKLAB_CMAKE_ARGS="-DRANKLAB_SANITIZE=address,undefined -DRANKLAB_BUILD_BENCH=OFF" \
    BUILD_TARGETS="traces_test traces_tools_test traces_fr_test traces_nccl_ras_test torch_wire_test" \
    configure_and_build
  ctest --test-dir "$ROOT/build-asan" --output-on-failure -j"$(nproc)" -L nofibers
  # libFuzzer (clang) on the trace reader and tools, the SimGrid TI importer, the Flight
  # Recorder importer, the NCCL log importer and the NCCL RAS snapshot readers, 30 s each.
  install_packages clang libclang-rt-14-dev
  BUILD_DIR="$ROOT/build-fuzz" BUILD_TARGETS="trace_reader_fuzzer ti_importer_fuzzer fr_importer_fuzzer nccl_log_fuzzer nccl_ras_fuzzer" \
    RANKLAB_CMAKE_ARGS="-DCMAKE_CXX_COMPILER=clang++ -DRANKLAB_BUILD_FUZZERS=ON -DRANKLAB_FUZZ_SECONDS=30 -DRANKLAB_BUILD_TESTS=OFF -DRANKLAB_BUILD_BENCH=OFF" \
    configure_and_build
  ctest --test-dir "$ROOT/build-fuzz" --output-on-failure -L fuzz --no-tests=error
fi
