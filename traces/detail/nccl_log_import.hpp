// The NCCL log importer's model of a job (mapping in traces/nccl_log.hpp): the ranks
// (devices of processes), the communicators and each rank's operations, as read from the
// lines (nccl_log_read.cpp), then which operations never completed (nccl_log_settle.cpp).
// Private to traces/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "traces/nccl_log.hpp"
#include "traces/types.hpp"

namespace ranklab::detail::nccl {

/// One operation line.
struct Op {
  std::uint32_t record = 0;  ///< the communicator it ran on: an index into Logs::records
  OpKind kind = OpKind::all_reduce;
  DataType dtype = DataType::u8;
  ReduceOp reduce = ReduceOp::sum;  ///< reductions only
  std::int8_t nccl_datatype = 0;    ///< ncclDataType_t, for the site's label
  int root = -1;                    ///< root or peer, a rank of the communicator; -1 none
  std::uint64_t count = 0;          ///< in ranklab elements of dtype
  std::uint64_t nccl_count = 0;     ///< as printed
  std::uint64_t op_count = 0;
  std::uint32_t file = 0;
  std::uint64_t line = 0;
};

/// One Init COMPLETE line: a communicator as one process holds it.
struct CommRecord {
  std::uint32_t identity = 0;  ///< which communicator: an index into Logs::identities
  int rank = 0;
  int device = 0;              ///< an index into Logs::devices
};

/// One communicator, with its members as the logs show them.
struct Identity {
  std::uint64_t comm_id = 0;   ///< 0: a split, known by parent, split and color
  int parent = -1;
  std::int64_t split = 0;
  std::int64_t color = 0;
  int nranks = 0;
  std::vector<int> members;    ///< device of each rank; -1 where no log showed it
  std::uint32_t file = 0;      ///< its first Init COMPLETE line
  std::uint64_t line = 0;
  bool used = false;           ///< operations ran on it
};

/// A rank: one device of one process.
struct Device {
  std::uint32_t process = 0;  ///< an index into Logs::processes
  int cuda_dev = 0;
  std::uint32_t file = 0;     ///< its first Init COMPLETE line
  std::uint64_t line = 0;
  std::vector<Op> ops;        ///< in log order
};

struct Logs {
  std::vector<std::string> files;
  std::vector<std::string> processes;  ///< "HOST:PID"
  std::vector<Identity> identities;
  std::vector<CommRecord> records;
  std::vector<Device> devices;
  std::uint64_t skipped_lines = 0;
  std::uint64_t files_with_lines = 0;  ///< files holding an init or operation line
};

/// Reads every line of `logs`. Throws TraceError "FILE:LINE: reason".
Logs read_logs(const std::vector<NcclLogFile>& logs);

/// Per device, per operation: whether it never completed (nccl_log.hpp says when).
std::vector<std::vector<bool>> never_completed(const Logs& logs);

/// "FILE:LINE" of an operation or Init line, for errors.
inline std::string where(const Logs& logs, std::uint32_t file, std::uint64_t line) {
  return logs.files[file] + ":" + std::to_string(line);
}

}  // namespace ranklab::detail::nccl
