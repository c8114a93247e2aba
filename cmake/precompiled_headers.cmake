# Precompiled headers for the libraries the `ranklab` command is built from (issue 26 §7).
#
# Why: nlohmann/json reaches 168 of the command's 210 translation units (traces/event.hpp
# holds a json by value), fmt 150, CLI11 and spdlog most of cli/, Boost.Fiber most of
# emulator/; parsing them again in every unit was most of a fresh build's CPU time
# (bench/RESULTS.md, "The first build"). Each library gets one precompiled header of the
# third-party and standard headers its units use most, built with that library's own flags.
#
# Only third-party and standard headers, never one of ours: a precompiled header is included
# first in every unit of its target, and one of our headers there would make its declarations
# visible where the unit does not include it. Third-party headers we never configure with
# macros of our own (no source defines EIGEN_*, FMT_*, JSON_*, SPDLOG_* itself), so they
# read the same wherever they are included.
#
# A unit that forgets an include of one of these headers still compiles with them on: the
# UBSan build of CI (scripts/test.sh) turns them off and builds every target, so a missing
# include fails there. Off too under ccache (CMAKE_CXX_COMPILER_LAUNCHER): ccache caches a
# unit that uses a precompiled header only with `sloppiness = pch_defines,time_macros`, and
# without it each such unit would miss the cache; incremental builds gain more from ccache.
set(ranklab_pch_default ON)
if(CMAKE_CXX_COMPILER_LAUNCHER MATCHES "ccache")
  set(ranklab_pch_default OFF)
endif()
option(RANKLAB_PRECOMPILED_HEADERS
       "Precompile the third-party headers of each library (off under ccache)"
       ${ranklab_pch_default})

# What nearly every unit of every library includes.
set(ranklab_pch_common
  <algorithm> <cstddef> <cstdint> <memory> <optional> <stdexcept> <string> <string_view>
  <utility> <vector>
  <fmt/format.h> <nlohmann/json.hpp>)

# ranklab_precompile(TARGET HEADER...): TARGET's units include the common headers and
# HEADER... precompiled, when the option is on and TARGET exists in this configuration.
function(ranklab_precompile target)
  if(RANKLAB_PRECOMPILED_HEADERS AND TARGET ${target})
    target_precompile_headers(${target} PRIVATE ${ranklab_pch_common} ${ARGN})
  endif()
endfunction()

ranklab_precompile(ranklab_traces <filesystem> <map>)
ranklab_precompile(ranklab_comm <span>)
ranklab_precompile(ranklab_emulator <chrono> <filesystem> <map> <mutex> <unordered_map>
  <boost/fiber/algo/algorithm.hpp> <boost/fiber/condition_variable.hpp>
  <boost/fiber/context.hpp> <boost/fiber/properties.hpp>)
ranklab_precompile(ranklab_collectives <chrono> <span>)
ranklab_precompile(ranklab_mpi <chrono> <deque> <map> <span>)
ranklab_precompile(ranklab_model <chrono> <filesystem> <span> <Eigen/Core>)
ranklab_precompile(ranklab_torch_bridge <chrono> <map>)
ranklab_precompile(ranklab_cli_lib <chrono> <filesystem> <map> <span>
  <CLI/CLI.hpp> <spdlog/spdlog.h> <Eigen/Core>)
