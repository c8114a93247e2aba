// One PyTorch Flight Recorder dump (one rank's), read and checked: the JSON that
// `torch._C._distributed_c10d._dump_fr_trace_json()` returns or the pickle that a timeout
// writes (TORCH_FR_DUMP_TEMP_FILE, by default /tmp/nccl_trace_rank_N). Private to traces/;
// traces/flight_recorder.hpp is the importer built on it.
//
// The fields read (torch/csrc/distributed/c10d/FlightRecorder.hpp, version "2.x"):
//   version      "2.MINOR" (a major other than 2 is refused)
//   rank         the dump's global rank; else the digits that end the file's name
//   pg_config    {NAME: {"name", "desc", "ranks"}}: ranks a list or the string "[0, 1]"
//   entries      in record order, each:
//     record_id, pg_id, process_group [NAME, DESC], collective_seq_id, p2p_seq_id
//     profiling_name  "BACKEND:OP" ("nccl:all_reduce", "gloo:broadcast"), "BACKEND:send A->B"
//                     or "BACKEND:recv A<-B" (group ranks), "BACKEND:coalesced"
//     input_sizes, input_dtypes, output_sizes, output_dtypes   (lists of shapes, dtype names)
//     state        scheduled | started | completed
//     frames       optional [{name, filename, line}], innermost first (pickle dumps only);
//                  the call site is the first frame whose file is not torch's (no `/torch/`
//                  folder in its path, not `<frozen ...>`), else the innermost
//     time_created_ns, time_discovered_started_ns, time_discovered_completed_ns
//                  optional: the host clock (ns since the epoch) when the entry was made and
//                  when the watchdog saw its kernel start and end; None (pickle) or 0 (JSON)
//                  when it did not
//     thread_id, thread_name   optional (2.10): the thread that issued the operation
//   comm_lib_version  optional: "ranklab" marks a dump that `ranklab export` wrote
// Everything else (pg_status, duration_ms, nccl_comm_state) is ignored.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "traces/event.hpp"

namespace ranklab::detail {

/// The comm_lib_version `ranklab export --flight-recorder` writes, which marks its dumps.
inline constexpr std::string_view kRanklabCommLib = "ranklab";

/// What an entry asks for, once its profiling name is read.
enum class FrOpKind { collective, send, recv, coalesced };

struct FrEntry {
  std::size_t index = 0;      ///< position in the dump's `entries`, for errors ("entry N")
  std::string pg;             ///< process group name (pg_config's key)
  std::uint64_t collective_seq = 0;
  std::uint64_t p2p_seq = 0;
  std::string profiling_name;
  FrOpKind kind = FrOpKind::collective;
  OpKind op = OpKind::all_reduce;  ///< the ranklab operation (collective, send, recv)
  int self_group_rank = -1;        ///< p2p: this rank's group rank as the name says
  int peer_group_rank = -1;        ///< p2p: the other side's group rank
  DataType dtype = DataType::u8;
  /// Elements of the per-rank unit (FORMAT.md: buffer, gather input, scatter output, one
  /// all_to_all chunk times the group size until the group is known), in `dtype`.
  std::uint64_t count = 0;
  bool completed = false;
  CallSite site;  ///< innermost frame outside torch's own files
  /// Host clock in ns since the epoch (kNoTime: not recorded, or never reached).
  std::int64_t created_ns = kNoTime;
  std::int64_t started_ns = kNoTime;
  std::int64_t completed_ns = kNoTime;
  std::string thread_id;    ///< version 2.10; empty when absent
  std::string thread_name;  ///< version 2.10; empty when absent
};

struct FrProcessGroup {
  std::string name;
  std::string desc;
  std::vector<int> ranks;  ///< global ranks, ascending (torch's group rank order)
};

struct FrDump {
  std::string file;  ///< as errors name it
  int rank = 0;
  std::string version;
  std::string comm_lib_version;  ///< NCCL's version, or "ranklab" for ranklab's own export
  std::map<std::string, FrProcessGroup> groups;
  std::vector<FrEntry> entries;
};

/// Reads one dump (pickle if it starts with the PROTO opcode, else JSON). Throws
/// TraceError "FILE: reason" or "FILE: entry N: reason".
FrDump read_fr_dump(std::string_view bytes, std::string_view file);

}  // namespace ranklab::detail
