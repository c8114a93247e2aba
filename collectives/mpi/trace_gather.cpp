#include "collectives/mpi/detail/trace_gather.hpp"

#include <sstream>

#include <fmt/format.h>

#include "collectives/mpi/detail/mpi_call.hpp"
#include "emulator/errors.hpp"
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

// Every process's text, at rank 0.
std::vector<std::string> gather_texts(Runtime& runtime, const std::string& mine) {
  const MPI_Comm comm = runtime.end_comm();
  const int size = runtime.world_size();
  const bool root = runtime.world_rank() == 0;
  const int length = mpi_count(mine.size(), "a process's trace");
  std::vector<int> lengths(root ? static_cast<std::size_t>(size) : 0);
  check(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, comm),
        [] { return std::string("gathering the trace sizes"); });
  std::vector<int> displs(lengths.size());
  std::size_t total = 0;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    displs[i] = mpi_count(total, "the job's trace");
    total += static_cast<std::size_t>(lengths[i]);
  }
  std::string all(total, '\0');
  check(MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), displs.data(),
                    MPI_CHAR, 0, comm),
        [] { return std::string("gathering the traces"); });
  std::vector<std::string> texts;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    texts.push_back(all.substr(static_cast<std::size_t>(displs[i]),
                               static_cast<std::size_t>(lengths[i])));
  }
  return texts;
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
  const std::vector<std::string> texts = gather_texts(runtime, local_trace_text(runtime));
  Trace trace;
  if (runtime.world_rank() != 0) return trace;
  trace.header.world_size = runtime.world_size();
  trace.header.config = config;
  trace.ranks.resize(static_cast<std::size_t>(runtime.world_size()));
  for (std::size_t r = 0; r < texts.size(); ++r) {
    std::istringstream in(texts[r]);
    Trace part = read_trace(in, fmt::format("rank {}'s trace", r));
    for (TraceEvent event : part.ranks.at(r)) {
      event.group = merged_index(trace.header.groups, part.header.groups.at(event.group));
      trace.ranks[r].push_back(std::move(event));
    }
  }
  if (trace.header.groups.empty()) {
    trace.header.groups.push_back(TraceGroup{"world", runtime.world()->ranks});
  }
  return trace;
}

}  // namespace ranklab::mpi_detail
