# Precompiled headers for the libraries the `ranklab` command is built from (issue 26 §7).
#
# Why: nlohmann/json reaches 168 of the command's 210 translation units (traces/event.hpp
# holds a json by value), fmt 150, CLI11 and spdlog most of cli/, Boost.Fiber most of
# emulator/; parsing them again in every unit is most of a unit's compile (71% of
# traces/compute.cpp's at -O3; bench/RESULTS.md, "The first build"). Each library gets one precompiled header of the
# third-party and standard headers its units use most, built with that library's own flags.
#
# Only third-party and standard headers, never one of ours: a precompiled header is included
# first in every unit of its target, and one of our headers there would make its declarations
# visible where the unit does not include it. Third-party headers we never configure with
# macros of our own (no source defines EIGEN_*, FMT_*, JSON_*, SPDLOG_* itself), so they
# read the same wherever they are included.
#
# Off by default, for now (bench/RESULTS.md, "The first build"): with them GCC 12 at -O3
# reports a false -Wstringop-overflow inside std::string's operator+ in
# traces/rank_list.cpp (the family of GCC bug 105329 that -Wno-restrict works around), which
# -Werror makes an error, and no whole build with them has yet been checked against
# traces/examples/regenerate.sh. Under ccache (CMAKE_CXX_COMPILER_LAUNCHER) they would cost
# more than they save: ccache caches a unit that uses a precompiled header only with
# `sloppiness = pch_defines,time_macros`, and misses on each such unit otherwise.
# A unit that forgets an include of one of these headers still compiles with them on: a
# build with them off (every build today) is the one that catches it.
option(RANKLAB_PRECOMPILED_HEADERS
       "Precompile the third-party and standard headers of each library (not with ccache)" OFF)

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
