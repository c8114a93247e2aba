#include "traces/nccl_ras.hpp"

#include <array>

#include "traces/error.hpp"
#include "traces/input_file.hpp"

namespace ranklab {
namespace {

// ncclFuncStr (src/init.cc): the order of RAS's collOpCounts and of its JSON keys.
constexpr std::array<std::string_view, kRasCollectives> kNcclNames = {
    "Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"};
constexpr std::array<std::string_view, kRasCollectives> kNames = {
    "broadcast", "reduce", "all_gather", "reduce_scatter", "all_reduce"};

/// A RAS report is a few kilobytes per communicator; 256 MiB is a job far beyond any today.
constexpr std::uintmax_t kMaxSnapshotBytes = std::uintmax_t{256} << 20;

}  // namespace

std::string_view ras_collective_nccl_name(std::size_t kind) { return kNcclNames.at(kind); }
std::string_view ras_collective_name(std::size_t kind) { return kNames.at(kind); }

RasSnapshot parse_nccl_ras(std::string_view name, std::string_view text) {
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '{') return detail::ras::parse_json(name, text);
  return detail::ras::parse_text(name, text);
}

std::vector<RasSnapshot> read_nccl_ras(const std::vector<std::filesystem::path>& paths) {
  if (paths.empty()) throw UsageError("no RAS snapshot given");
  std::vector<RasSnapshot> snapshots;
  for (const auto& path : paths) {
    const std::string text = read_input_file(path, "an NCCL RAS snapshot", kMaxSnapshotBytes);
    snapshots.push_back(parse_nccl_ras(path.string(), text));
  }
  return snapshots;
}

}  // namespace ranklab
