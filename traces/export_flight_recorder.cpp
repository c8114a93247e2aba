// The Flight Recorder exporter (format and mapping in export_flight_recorder.hpp): per rank,
// its operations -> torch's entries (names, shapes, seq ids, states, times) -> the document
// -> pickle or JSON bytes; then the folder checked and the files written.
#include "traces/export_flight_recorder.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <ostream>
#include <set>

#include "traces/error.hpp"
#include "traces/fr_dump.hpp"
#include "traces/input_file.hpp"
#include "traces/output_file.hpp"
#include "traces/pickle_reader.hpp"
#include "traces/pickle_writer.hpp"
#include "traces/timeline.hpp"

namespace ranklab {
namespace {

using nlohmann::ordered_json;

/// ProcessGroupNCCL's default timeout (10 minutes), which every entry records.
constexpr std::int64_t kTimeoutMs = 600'000;
constexpr std::uintmax_t kMaxExistingDumpBytes = std::uintmax_t{1} << 30;

/// c10::toString(ScalarType) of each ranklab type.
std::string_view torch_dtype(DataType type) {
  switch (type) {
    case DataType::u8: return "Byte";
    case DataType::i32: return "Int";
    case DataType::i64: return "Long";
    case DataType::f32: return "Float";
    case DataType::f64: return "Double";
    case DataType::bf16: return "BFloat16";
    case DataType::f16: return "Half";
  }
  return "Byte";
}

/// What ProcessGroupNCCL calls each collective after "nccl:".
std::string_view collective_name(OpKind op) {
  switch (op) {
    case OpKind::all_reduce: return "all_reduce";
    case OpKind::broadcast: return "broadcast";
    case OpKind::reduce: return "reduce";
    case OpKind::all_gather: return "all_gather";
    case OpKind::reduce_scatter: return "reduce_scatter";
    case OpKind::all_to_all: return "all_to_all";
    case OpKind::gather: return "gather";
    case OpKind::scatter: return "scatter";
    case OpKind::barrier: return "all_reduce_barrier";  // a one-Float all_reduce in torch
    case OpKind::send:
    case OpKind::recv: break;
  }
  return "";
}

bool is_p2p(const TraceEvent& e) { return e.op == OpKind::send || e.op == OpKind::recv; }

/// Shapes as lists of one-dimensional sizes, with one dtype name per tensor.
struct Tensors {
  ordered_json sizes = ordered_json::array();
  ordered_json dtypes = ordered_json::array();

  void add(std::uint64_t numel, std::string_view dtype, std::size_t times = 1) {
    for (std::size_t i = 0; i < times; ++i) {
      sizes.push_back(ordered_json::array({numel}));
      dtypes.push_back(dtype);
    }
  }
};

/// The input and output tensors torch records for `e` in a group of `size` ranks.
std::pair<Tensors, Tensors> tensors(const TraceEvent& e, std::size_t size) {
  Tensors in;
  Tensors out;
  const std::uint64_t n = e.count;
  const std::string_view dtype = torch_dtype(e.dtype);
  const bool root = e.root == e.rank;
  switch (e.op) {
    case OpKind::barrier:
      in.add(1, "Float");
      out.add(1, "Float");
      break;
    case OpKind::all_gather:  // all_gather_into_tensor: the output holds every rank's input
      in.add(n, dtype);
      out.add(n * size, dtype);
      break;
    case OpKind::reduce_scatter:
      in.add(n * size, dtype);
      out.add(n, dtype);
      break;
    case OpKind::all_to_all:  // all_to_all_single: a chunk per rank each way
      in.add(n * size, dtype);
      out.add(n * size, dtype);
      break;
    case OpKind::gather:  // the root's output list holds a tensor per rank; the others none
      in.add(n, dtype);
      if (root) out.add(n, dtype, size);
      break;
    case OpKind::scatter:
      if (root) in.add(n, dtype, size);
      out.add(n, dtype);
      break;
    default:
      in.add(n, dtype);
      out.add(n, dtype);
  }
  return {std::move(in), std::move(out)};
}

/// Sequence counters of one process group on one rank, and its pg_status.
struct GroupCounters {
  std::int64_t collective_seq = 0;
  std::int64_t p2p_seq = 0;
  std::int64_t op_id = 0;
  std::int64_t last_enqueued = -1;
  std::int64_t last_started = -1;
  std::int64_t last_completed = -1;
};

class DumpBuilder {
 public:
  explicit DumpBuilder(const Trace& trace) : trace_(trace), timeline_(trace) {
    for (const TraceGroup& group : trace.header.groups) {
      std::vector<int> ranks = group.ranks;
      std::sort(ranks.begin(), ranks.end());  // torch's group ranks: ascending global ranks
      sorted_.push_back(std::move(ranks));
    }
  }

  ordered_json dump(int rank, FrDumpForm form) const {
    if (rank < 0 || static_cast<std::size_t>(rank) >= trace_.ranks.size()) {
      throw TraceError(fmt::format("no rank {} in a trace of {} ranks", rank, trace_.ranks.size()));
    }
    std::map<std::uint32_t, GroupCounters> counters;
    for (std::uint32_t g = 0; g < sorted_.size(); ++g) {
      if (std::binary_search(sorted_[g].begin(), sorted_[g].end(), rank)) counters[g];
    }
    ordered_json entries = entries_of(rank, counters, form);
    ordered_json doc;
    doc["version"] = kFrExportVersion;
    doc["pg_config"] = pg_config(counters);
    doc["comm_lib_version"] = detail::kRanklabCommLib;
    doc["pg_status"] = pg_status(counters, form);
    // dump_json leaves out an empty entries list; the pickle always has one.
    if (form == FrDumpForm::pickle || !entries.empty()) doc["entries"] = std::move(entries);
    return doc;
  }

 private:
  std::string pg_name(std::uint32_t group) const { return std::to_string(group); }
  std::string pg_desc(std::uint32_t group) const {
    return group == 0 ? "default_pg" : trace_.header.groups[group].name;
  }

  ordered_json pg_config(const std::map<std::uint32_t, GroupCounters>& groups) const {
    ordered_json config = ordered_json::object();
    for (const auto& [g, counters] : groups) {
      config[pg_name(g)] = {{"name", pg_name(g)},
                            {"desc", pg_desc(g)},
                            {"ranks", fmt::format("[{}]", fmt::join(sorted_[g], ", "))}};
    }
    return config;
  }

  static ordered_json pg_status(const std::map<std::uint32_t, GroupCounters>& groups, FrDumpForm form) {
    ordered_json status = ordered_json::object();
    for (const auto& [g, c] : groups) {
      const auto value = [form](std::int64_t v) -> ordered_json {
        return form == FrDumpForm::json ? ordered_json(std::to_string(v)) : ordered_json(v);
      };
      status[std::to_string(g)] = {{"last_enqueued_collective", value(c.last_enqueued)},
                                   {"last_started_collective", value(c.last_started)},
                                   {"last_completed_collective", value(c.last_completed)}};
    }
    return status;
  }

  /// Whether event i joins event i-1 in a coalesced batch: both sends or receives of one
  /// group, i posted while i-1 was still in flight.
  bool joins_previous(const std::vector<TraceEvent>& events, std::size_t i) const {
    if (i == 0) return false;
    const TraceEvent& e = events[i];
    const TraceEvent& before = events[i - 1];
    return is_p2p(e) && is_p2p(before) && e.group == before.group &&
           std::find(e.in_flight.begin(), e.in_flight.end(), before.rank_seq) != e.in_flight.end();
  }

  std::string profiling_name(const TraceEvent& e) const {
    if (!is_p2p(e)) return fmt::format("nccl:{}", collective_name(e.op));
    const std::vector<int>& ranks = sorted_[e.group];
    const auto position = [&](int global) {
      const auto it = std::lower_bound(ranks.begin(), ranks.end(), global);
      if (it == ranks.end() || *it != global) {
        throw TraceError(fmt::format("rank {} operation {}: peer {} is not in group '{}'", e.rank,
                                     e.rank_seq, global, trace_.header.groups[e.group].name));
      }
      return it - ranks.begin();
    };
    return e.op == OpKind::send ? fmt::format("nccl:send {}->{}", position(e.rank), position(e.peer))
                                : fmt::format("nccl:recv {}<-{}", position(e.rank), position(e.peer));
  }

  ordered_json entries_of(int rank, std::map<std::uint32_t, GroupCounters>& counters,
                          FrDumpForm form) const {
    const std::vector<TraceEvent>& events = trace_.ranks[static_cast<std::size_t>(rank)];
    ordered_json entries = ordered_json::array();
    std::set<std::pair<std::uint32_t, int>> busy_streams;  // streams with a pending op so far
    for (std::size_t i = 0; i < events.size(); ++i) {
      const TraceEvent& e = events[i];
      if (is_p2p(e) && e.peer == kNoRank) continue;  // an any-source receive never matched
      GroupCounters& c = counters[e.group];
      const bool batched = joins_previous(events, i);
      if (!is_p2p(e)) ++c.collective_seq;
      else if (!batched) ++c.p2p_seq;
      ++c.op_id;
      const Placement& at = timeline_.at({rank, i});
      const auto created = static_cast<std::int64_t>(std::llround(at.start_ns));
      std::string state = "completed";
      if (e.status == OpStatus::pending) {
        const std::pair<std::uint32_t, int> stream{e.group, is_p2p(e) ? e.peer : kNoRank};
        state = busy_streams.insert(stream).second ? "started" : "scheduled";
      }
      if (!is_p2p(e)) {
        c.last_enqueued = c.collective_seq;
        if (state != "scheduled") c.last_started = c.collective_seq;
        if (state == "completed") c.last_completed = c.collective_seq;
      }
      const auto [in, out] = tensors(e, sorted_[e.group].size());
      ordered_json entry;
      if (form == FrDumpForm::pickle) entry["frames"] = frames(e);
      entry["record_id"] = entries.size();
      entry["pg_id"] = e.group;
      entry["process_group"] = ordered_json::array({pg_name(e.group), pg_desc(e.group)});
      entry["thread_name"] = fmt::format("ranklab rank {}", rank);
      entry["thread_id"] = std::to_string(rank);
      entry["collective_seq_id"] = c.collective_seq;
      entry["p2p_seq_id"] = c.p2p_seq;
      entry["op_id"] = c.op_id;
      entry["profiling_name"] = profiling_name(e);
      entry["time_created_ns"] = created;
      entry["input_sizes"] = in.sizes;
      entry["input_dtypes"] = in.dtypes;
      entry["output_sizes"] = out.sizes;
      entry["output_dtypes"] = out.dtypes;
      entry["state"] = state;
      const ordered_json absent = form == FrDumpForm::json ? ordered_json(0) : ordered_json(nullptr);
      entry["time_discovered_started_ns"] = state == "scheduled" ? absent : ordered_json(created);
      entry["time_discovered_completed_ns"] =
          state == "completed" ? ordered_json(std::llround(at.start_ns + at.duration_ns)) : absent;
      entry["retired"] = state == "completed";
      entry["timeout_ms"] = kTimeoutMs;
      entry["is_p2p"] = is_p2p(e);
      entries.push_back(std::move(entry));
      const bool batch_ends = batched && (i + 1 == events.size() || !joins_previous(events, i + 1));
      if (batch_ends) entries.push_back(coalesced_end(entries, form));
    }
    return entries;
  }

  /// The entry that closes a coalesced batch: its members' seq ids, no tensors; completed
  /// when every member is.
  static ordered_json coalesced_end(const ordered_json& entries, FrDumpForm form) {
    ordered_json end = entries.back();
    bool all_completed = true;
    for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
      if ((*it)["p2p_seq_id"] != end["p2p_seq_id"] || (*it)["pg_id"] != end["pg_id"] ||
          (*it)["profiling_name"] == "nccl:coalesced") {
        break;
      }
      all_completed = all_completed && (*it)["state"] == "completed";
    }
    end["record_id"] = entries.size();
    end["profiling_name"] = "nccl:coalesced";
    for (const char* key : {"input_sizes", "input_dtypes", "output_sizes", "output_dtypes"}) {
      end[key] = ordered_json::array();
    }
    if (form == FrDumpForm::pickle) end["frames"] = entries.back()["frames"];
    if (!all_completed) {
      end["state"] = "started";
      end["time_discovered_completed_ns"] = form == FrDumpForm::json ? ordered_json(0) : ordered_json(nullptr);
      end["retired"] = false;
    }
    return end;
  }

  /// The call site as torch's one frame: {name, filename, line}; none when unknown.
  static ordered_json frames(const TraceEvent& e) {
    ordered_json list = ordered_json::array();
    if (e.site.empty() || (e.site->file.empty() && e.site->function.empty())) return list;
    list.push_back({{"name", e.site->function}, {"filename", e.site->file}, {"line", e.site->line}});
    return list;
  }

  const Trace& trace_;
  Timeline timeline_;
  std::vector<std::vector<int>> sorted_;  ///< each group's ranks, ascending
};

std::string bytes_of(const ordered_json& doc, FrDumpForm form) {
  if (form == FrDumpForm::pickle) return write_pickle(doc, {.tuple_keys = {"process_group"}});
  return nlohmann::json::parse(doc.dump()).dump();  // dump_json's nlohmann object: sorted keys
}

/// A file that an earlier export of this form wrote (and may be replaced).
bool is_ranklab_dump(const std::filesystem::path& path, FrDumpForm form) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(std::filesystem::symlink_status(path, error))) return false;
  if (std::filesystem::file_size(path, error) > kMaxExistingDumpBytes || error) return false;
  try {
    const std::string bytes = read_input_file(path, "Flight Recorder dump");
    const bool pickled = !bytes.empty() && static_cast<unsigned char>(bytes.front()) == 0x80;
    if (pickled != (form == FrDumpForm::pickle)) return false;
    const nlohmann::json doc = pickled ? read_pickle(bytes, path.string()) : nlohmann::json::parse(bytes);
    const auto it = doc.is_object() ? doc.find("comm_lib_version") : doc.end();
    return it != doc.end() && *it == detail::kRanklabCommLib;
  } catch (const std::exception&) {
    return false;
  }
}

/// Refuses a folder holding a file the analyzer would read beside the export.
void check_folder(const std::filesystem::path& folder, const std::set<std::string>& names,
                  FrDumpForm form) {
  std::error_code error;
  if (!std::filesystem::exists(folder, error)) return;
  if (!std::filesystem::is_directory(folder, error)) {
    throw TraceError(fmt::format("{}: cannot write Flight Recorder dumps (not a folder)", folder.string()));
  }
  std::vector<std::string> foreign;
  for (const auto& item : std::filesystem::directory_iterator(folder, error)) {
    const std::string name = item.path().filename().string();
    if (!name.starts_with(kFrDumpPrefix)) continue;
    if (names.count(name) != 0 && is_ranklab_dump(item.path(), form)) continue;
    foreign.push_back(name);
  }
  if (error) throw TraceError(fmt::format("{}: cannot list: {}", folder.string(), error.message()));
  if (foreign.empty()) return;
  std::sort(foreign.begin(), foreign.end());
  throw TraceError(fmt::format(
      "{}: holds {}, not {} dump{} of this export's ranks written by ranklab; PyTorch's analyzer "
      "reads every file named {}* in a folder, so give an empty or new folder",
      folder.string(), foreign.front(), form == FrDumpForm::pickle ? "a pickle" : "a JSON",
      foreign.size() > 1 ? fmt::format(" (nor {} more)", foreign.size() - 1) : "", kFrDumpPrefix));
}

}  // namespace

std::vector<int> flight_recorder_ranks(const Trace& trace) {
  std::set<int> without;
  const auto& config = trace.header.config;
  if (const auto it = config.find("ranks_without_dump"); it != config.end() && it->is_array()) {
    for (const auto& r : *it) {
      if (r.is_number_integer()) without.insert(r.get<int>());
    }
  }
  std::vector<int> ranks;
  for (int r = 0; r < static_cast<int>(trace.ranks.size()); ++r) {
    if (without.count(r) == 0) ranks.push_back(r);
  }
  return ranks;
}

ordered_json flight_recorder_dump(const Trace& trace, int rank, FrDumpForm form) {
  return DumpBuilder(trace).dump(rank, form);
}

std::string flight_recorder_file_name(int rank, FrDumpForm form) {
  return fmt::format("{}{}{}", kFrDumpPrefix, rank, form == FrDumpForm::json ? ".json" : "");
}

std::string flight_recorder_file(const Trace& trace, int rank, FrDumpForm form) {
  return bytes_of(flight_recorder_dump(trace, rank, form), form);
}

FrExportSummary write_flight_recorder_dumps(const std::filesystem::path& folder,
                                            const Trace& trace, FrDumpForm form) {
  const std::vector<int> ranks = flight_recorder_ranks(trace);
  std::set<std::string> names;
  for (int r : ranks) names.insert(flight_recorder_file_name(r, form));
  check_folder(folder, names, form);
  create_output_folder(folder, "Flight Recorder dumps");
  const DumpBuilder builder(trace);
  FrExportSummary summary;
  for (int r : ranks) {
    const ordered_json doc = builder.dump(r, form);
    if (const auto it = doc.find("entries"); it != doc.end()) summary.entries += it->size();
    const std::string bytes = bytes_of(doc, form);
    write_output_file(folder / flight_recorder_file_name(r, form), "Flight Recorder dump",
                      [&bytes](std::ostream& out) { out.write(bytes.data(), static_cast<std::streamsize>(bytes.size())); });
    ++summary.dumps;
  }
  return summary;
}

}  // namespace ranklab
