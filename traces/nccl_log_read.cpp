// The NCCL log importer's first pass (traces/detail/nccl_log_import.hpp): every line of every
// log, in order, into processes, communicators and each rank's operations.
#include <fmt/format.h>

#include <cstring>
#include <map>
#include <unordered_map>

#include "traces/detail/nccl_log_import.hpp"
#include "traces/detail/nccl_log_line.hpp"
#include "traces/error.hpp"
#include "traces/event.hpp"

namespace ranklab::detail::nccl {
namespace {

constexpr int kMaxRanks = 1 << 20;
constexpr std::size_t kMaxCommunicators = 1 << 20;

/// A process's communicators by address: the record each address names now (an address may
/// be reused after ncclCommDestroy; its next Init COMPLETE line takes it over).
struct Process {
  std::unordered_map<std::uint64_t, std::uint32_t> comms;
  /// The last address an operation line named, and its record: a process's operations
  /// mostly run on one communicator, and this spares the map a lookup per line. 0: none.
  std::uint64_t last_comm = 0;
  std::uint32_t last_record = 0;
};

class Reader {
 public:
  Logs read(const std::vector<NcclLogFile>& files) {
    for (const NcclLogFile& file : files) logs_.files.push_back(file.name);
    for (std::uint32_t f = 0; f < files.size(); ++f) read_file(files[f].text, f);
    return std::move(logs_);
  }

 private:
  void read_file(std::string_view text, std::uint32_t file) {
    last_process_ = {};
    const std::uint64_t skipped = logs_.skipped_lines;
    std::uint64_t number = 0;
    while (!text.empty()) {
      const void* newline = std::memchr(text.data(), '\n', text.size());
      const std::size_t length =
          newline ? static_cast<std::size_t>(static_cast<const char*>(newline) - text.data()) : text.size();
      const std::string_view line = text.substr(0, length);
      text.remove_prefix(newline ? length + 1 : length);
      ++number;
      try {
        read_line(line, file, number);
      } catch (const LineError& error) {
        throw TraceError(fmt::format("{}: {}", where(logs_, file, number), error.what()));
      }
    }
    if (logs_.skipped_lines - skipped != number) ++logs_.files_with_lines;
  }

  void read_line(std::string_view text, std::uint32_t file, std::uint64_t line) {
    const ParsedLine parsed = parse_line(text);
    if (parsed.kind == LineKind::other) {
      ++logs_.skipped_lines;
      return;
    }
    const std::uint32_t process = process_index(parsed.process);
    if (parsed.kind == LineKind::init) {
      init(parsed.init, process, file, line);
    } else {
      operation(parsed.op, process, file, line);
    }
  }

  std::uint32_t process_index(std::string_view name) {
    if (name == last_process_) return last_index_;
    const auto [it, added] = process_ids_.try_emplace(std::string(name), static_cast<std::uint32_t>(logs_.processes.size()));
    if (added) {
      logs_.processes.push_back(it->first);
      processes_.emplace_back();
    }
    last_process_ = it->first;
    last_index_ = it->second;
    return it->second;
  }

  /// Which communicator an Init COMPLETE line is, across processes.
  std::uint32_t identity_of(const InitLine& init, std::uint32_t process) {
    Identity id;
    if (init.comm_id) {
      id.comm_id = *init.comm_id;
    } else if (init.parent && init.split_count && init.color) {
      const auto parent = processes_[process].comms.find(*init.parent);
      if (parent == processes_[process].comms.end()) {
        throw LineError(fmt::format("parent {:#x} has no Init COMPLETE line before it in process {}",
                                    *init.parent, logs_.processes[process]));
      }
      id.parent = static_cast<int>(logs_.records[parent->second].identity);
      id.split = *init.split_count;
      id.color = *init.color;
    } else {
      throw LineError(
          "an Init COMPLETE line with neither commId nor parent, childCount and color: which "
          "ranks share the communicator cannot be told (NCCL 2.21 and later print them)");
    }
    const std::string key = id.comm_id != 0 ? fmt::format("id {:x}", id.comm_id)
                                            : fmt::format("{}/{}/{}", id.parent, id.split, id.color);
    const auto [it, added] = identity_ids_.try_emplace(key, static_cast<std::uint32_t>(logs_.identities.size()));
    if (added) {
      if (logs_.identities.size() >= kMaxCommunicators) throw LineError("too many communicators");
      id.nranks = init.nranks;
      id.members.assign(static_cast<std::size_t>(init.nranks), -1);
      logs_.identities.push_back(std::move(id));
    }
    return it->second;
  }

  void init(const InitLine& init, std::uint32_t process, std::uint32_t file, std::uint64_t line) {
    if (init.nranks > kMaxRanks) throw LineError(fmt::format("nranks {} is too large", init.nranks));
    const std::uint32_t index = identity_of(init, process);
    Identity& id = logs_.identities[index];
    if (id.line == 0) {
      id.file = file;
      id.line = line;
    }
    if (id.nranks != init.nranks) {
      throw LineError(fmt::format("the communicator has nranks {} here but {} at {}", init.nranks,
                                  id.nranks, where(logs_, id.file, id.line)));
    }
    const auto [device_it, new_device] =
        device_ids_.try_emplace({process, init.cuda_dev}, static_cast<int>(logs_.devices.size()));
    if (new_device) logs_.devices.push_back({process, init.cuda_dev, file, line, {}});
    const int device = device_it->second;
    int& member = id.members[static_cast<std::size_t>(init.rank)];
    if (member != -1 && member != device) {
      throw LineError(fmt::format("rank {} of the communicator first initialized at {} is already "
                                  "process {} device {}",
                                  init.rank, where(logs_, id.file, id.line),
                                  logs_.processes[logs_.devices[static_cast<std::size_t>(member)].process],
                                  logs_.devices[static_cast<std::size_t>(member)].cuda_dev));
    }
    // One device is one rank of a communicator: a second rank of it here (a log pasted twice,
    // an edited line) would put one rank twice in its group.
    const auto [held, fresh] = rank_of_.try_emplace({index, device}, init.rank);
    if (!fresh && held->second != init.rank) {
      throw LineError(fmt::format("process {} device {} is already rank {} of the communicator "
                                  "first initialized at {}",
                                  logs_.processes[process], init.cuda_dev, held->second,
                                  where(logs_, id.file, id.line)));
    }
    member = device;
    processes_[process].comms[init.comm] = static_cast<std::uint32_t>(logs_.records.size());
    processes_[process].last_comm = 0;  // the address may now name this record
    logs_.records.push_back({index, init.rank, device});
  }

  /// The record the address `comm` names in `process` now.
  std::uint32_t record_of(std::uint64_t comm, std::uint32_t process) {
    Process& p = processes_[process];
    if (comm == p.last_comm) return p.last_record;
    const auto found = p.comms.find(comm);
    if (found == p.comms.end()) {
      throw LineError(fmt::format("comm {:#x} has no Init COMPLETE line before it in process {} "
                                  "(log with NCCL_DEBUG_SUBSYS=INIT,COLL)",
                                  comm, logs_.processes[process]));
    }
    p.last_comm = comm;
    p.last_record = found->second;
    return found->second;
  }

  void operation(const OpLine& line_op, std::uint32_t process, std::uint32_t file, std::uint64_t line) {
    const std::uint32_t record_index = record_of(line_op.comm, process);
    const CommRecord& record = logs_.records[record_index];
    Identity& id = logs_.identities[record.identity];
    if (line_op.nranks != id.nranks) {
      throw LineError(fmt::format("[nranks={}], but comm {:#x} has {} ranks", line_op.nranks,
                                  line_op.comm, id.nranks));
    }
    Op op;
    op.record = record_index;
    const std::optional<OpKind> kind = op_kind(line_op.name);
    if (!kind) {
      throw LineError(fmt::format("NCCL operation '{}' cannot be replayed (ranklab replays the "
                                  "collectives, Send and Recv)",
                                  line_op.name));
    }
    op.kind = *kind;
    const std::optional<ElementType> type = element_type(line_op.datatype);
    if (!type) {
      throw LineError(fmt::format("datatype {} is not one of NCCL {}'s (0 ncclInt8 to 11 "
                                  "ncclFloat8e5m2)",
                                  line_op.datatype, kNcclVersion));
    }
    op.dtype = type->dtype;
    op.nccl_datatype = static_cast<std::int8_t>(line_op.datatype);
    op.nccl_count = line_op.count;
    if (line_op.count > kMaxTraceCount / type->elements) {
      throw LineError(fmt::format("count {} of {} is more than 2^48 elements", line_op.count, type->name));
    }
    op.count = line_op.count * type->elements;
    if (takes_reduce_op(op.kind)) {
      const std::optional<ReduceOp> reduce = reduce_op(line_op.op);
      if (!reduce) throw LineError(fmt::format("op {} is not an NCCL reduction", line_op.op));
      op.reduce = *reduce;
    }
    if (takes_root(op.kind) || is_point_to_point(op.kind)) {
      if (line_op.root < 0 || line_op.root >= id.nranks) {
        throw LineError(fmt::format("root {} is not a rank of the communicator's {}", line_op.root, id.nranks));
      }
      op.root = static_cast<int>(line_op.root);
    }
    op.op_count = line_op.op_count;
    op.file = file;
    op.line = line;
    id.used = true;
    logs_.devices[static_cast<std::size_t>(record.device)].ops.push_back(op);
  }

  Logs logs_;
  std::vector<Process> processes_;
  std::unordered_map<std::string, std::uint32_t> process_ids_;
  std::unordered_map<std::string, std::uint32_t> identity_ids_;
  std::map<std::pair<std::uint32_t, int>, int> device_ids_;
  std::map<std::pair<std::uint32_t, int>, int> rank_of_;  ///< (communicator, device) -> rank
  std::string_view last_process_;
  std::uint32_t last_index_ = 0;
};

}  // namespace

Logs read_logs(const std::vector<NcclLogFile>& logs) { return Reader().read(logs); }

}  // namespace ranklab::detail::nccl
