#include "collectives/mpi/detail/trace_gather.hpp"

#include <sstream>

#include <fmt/format.h>

#include "collectives/mpi/detail/gather_strings.hpp"
#include "comm/errors.hpp"
#include "traces/jsonl.hpp"

namespace ranklab::mpi_detail {
namespace {

// This process's events as a trace of its own, as text.
std::string local_trace_text(Runtime& runtime) {
  Trace local;
  local.header.world_size = runtime.world_size();
  if (Recorder* recorder = runtime.recorder()) {
    local.header.groups = recorder->groups();
    local.ranks.resize(static_cast<std::size_t>(runtime.world_size()));
    local.ranks[static_cast<std::size_t>(runtime.world_rank())] = recorder->events();
  } else {
    local.header.groups = {TraceGroup{"world", runtime.world()->ranks}};
  }
  std::ostringstream out;
  write_trace(out, local);
  return out.str();
}

std::uint32_t merged_index(std::vector<TraceGroup>& groups, const TraceGroup& group) {
  for (std::size_t i = 0; i < groups.size(); ++i) {
    if (groups[i].name == group.name) return static_cast<std::uint32_t>(i);
  }
  groups.push_back(group);
  return static_cast<std::uint32_t>(groups.size() - 1);
}

}  // namespace

Trace gather_trace(Runtime& runtime, const nlohmann::json& config) {
  const std::vector<std::string> texts = gather_strings(runtime, local_trace_text(runtime));
  Trace trace;
  if (runtime.world_rank() != 0) return trace;
  trace.header.world_size = runtime.world_size();
  trace.header.config = config;
  trace.ranks.resize(static_cast<std::size_t>(runtime.world_size()));
  // The world first, as in every trace; then each process's groups, whether or not its
  // events use them (the emulator's header lists every group made).
  trace.header.groups.push_back(TraceGroup{"world", runtime.world()->ranks});
  for (std::size_t r = 0; r < texts.size(); ++r) {
    std::istringstream in(texts[r]);
    Trace part = read_trace(in, fmt::format("rank {}'s trace", r));
    std::vector<std::uint32_t> index;
    for (const TraceGroup& group : part.header.groups) {
      index.push_back(merged_index(trace.header.groups, group));
    }
    for (TraceEvent event : part.ranks.at(r)) {
      event.group = index.at(event.group);
      trace.ranks[r].push_back(std::move(event));
    }
  }
  return trace;
}

}  // namespace ranklab::mpi_detail
