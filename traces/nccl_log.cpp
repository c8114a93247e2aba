// The NCCL log importer (mapping in nccl_log.hpp): lines -> ranks, communicators and
// operations (nccl_log_read.cpp) -> which never completed (nccl_log_settle.cpp) -> each
// rank's operations re-issued into a TraceBuilder, one NCCL group at a time.
#include "traces/nccl_log.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "traces/detail/nccl_log_import.hpp"
#include "traces/detail/nccl_log_line.hpp"
#include "traces/error.hpp"
#include "traces/input_file.hpp"
#include "traces/trace_builder.hpp"

namespace ranklab {
namespace {

using detail::nccl::Device;
using detail::nccl::Identity;
using detail::nccl::Logs;
using detail::nccl::Op;

constexpr std::uintmax_t kMaxLogBytes = std::uintmax_t{1} << 32;

/// collectives.cc's names, for the sites: ncclAllReduce, ncclSend.
std::string_view nccl_function(OpKind kind) {
  switch (kind) {
    case OpKind::send: return "ncclSend";
    case OpKind::recv: return "ncclRecv";
    case OpKind::all_reduce: return "ncclAllReduce";
    case OpKind::broadcast: return "ncclBroadcast";
    case OpKind::reduce: return "ncclReduce";
    case OpKind::all_gather: return "ncclAllGather";
    case OpKind::reduce_scatter: return "ncclReduceScatter";
    case OpKind::gather: return "ncclGather";
    case OpKind::scatter: return "ncclScatter";
    case OpKind::all_to_all: return "ncclAlltoAll";
    case OpKind::barrier: break;
  }
  return "";
}

/// The communicator with the most ranks, the first initialized among equals: the world.
std::uint32_t world_of(const Logs& logs) {
  if (logs.identities.empty()) {
    throw TraceError(fmt::format("{}: no NCCL 'Init COMPLETE' line (log with NCCL_DEBUG=INFO "
                                 "NCCL_DEBUG_SUBSYS=INIT,COLL)",
                                 logs.files.empty() ? std::string("the logs") : logs.files.front()));
  }
  std::uint32_t world = 0;
  for (std::uint32_t g = 1; g < logs.identities.size(); ++g) {
    if (logs.identities[g].nranks > logs.identities[world].nranks) world = g;
  }
  return world;
}

class Emitter {
 public:
  explicit Emitter(const Logs& logs) : logs_(logs), world_(world_of(logs)) {
    const Identity& world = logs.identities[world_];
    global_.assign(logs.devices.size(), kNoRank);
    for (std::size_t r = 0; r < world.members.size(); ++r) {
      if (world.members[r] >= 0) global_[static_cast<std::size_t>(world.members[r])] = static_cast<int>(r);
    }
    for (std::size_t d = 0; d < logs.devices.size(); ++d) {
      const Device& device = logs.devices[d];
      if (global_[d] != kNoRank) continue;
      throw TraceError(fmt::format(
          "{}: process {} device {} is not a rank of the world communicator (the one with the "
          "most ranks, {} of them, first initialized at {})",
          detail::nccl::where(logs, device.file, device.line), logs.processes[device.process],
          device.cuda_dev, world.nranks, detail::nccl::where(logs, world.file, world.line)));
    }
  }

  Trace emit() {
    const Identity& world = logs_.identities[world_];
    TraceBuilder builder(world.nranks);
    group_.assign(logs_.identities.size(), 0);
    ranks_.assign(logs_.identities.size(), {});
    for (int r = 0; r < world.nranks; ++r) ranks_[world_].push_back(r);
    for (std::uint32_t g = 0; g < logs_.identities.size(); ++g) {
      if (g == world_ || !logs_.identities[g].used) continue;
      ranks_[g] = group_ranks(g);
      group_[g] = builder.add_group(name(g), ranks_[g]);
    }
    const std::vector<std::vector<bool>> pending = detail::nccl::never_completed(logs_);
    std::vector<std::vector<const Op*>> origin(world.members.size());
    for (std::size_t r = 0; r < world.members.size(); ++r) {
      const int device = world.members[r];
      if (device < 0) continue;
      const std::vector<Op>& ops = logs_.devices[static_cast<std::size_t>(device)].ops;
      const std::vector<bool>& stuck = pending[static_cast<std::size_t>(device)];
      origin[r] = emit_rank(builder, static_cast<int>(r), ops, stuck);
    }
    Trace trace = std::move(builder.build().trace);
    for (auto& events : trace.ranks) {
      for (TraceEvent& e : events) {
        const Op& op = *origin[static_cast<std::size_t>(e.rank)][e.rank_seq];
        const auto device = static_cast<std::size_t>(world.members[static_cast<std::size_t>(e.rank)]);
        const auto index = static_cast<std::size_t>(&op - logs_.devices[device].ops.data());
        finish_event(e, op, pending[device][index]);
      }
    }
    trace.sources.files = logs_.files;
    trace.header.version = imported_version(trace, "1.2");
    trace.header.config = config();
    return trace;
  }

 private:
  /// `world`; `commId:0x...`; PARENT/splitN:colorC for a split.
  std::string name(std::uint32_t g) const {
    if (g == world_) return "world";
    const Identity& id = logs_.identities[g];
    if (id.comm_id != 0) return fmt::format("commId:{:#x}", id.comm_id);
    return fmt::format("{}/split{}:color{}", name(static_cast<std::uint32_t>(id.parent)), id.split, id.color);
  }

  /// The communicator's ranks as world ranks. A member no log initialized can be only a
  /// rank of the world without a log: where one such member and one such rank are all there
  /// is, it is that rank; otherwise which rank it is cannot be told.
  std::vector<int> group_ranks(std::uint32_t g) const {
    const Identity& id = logs_.identities[g];
    const auto unknown = std::count(id.members.begin(), id.members.end(), -1);
    const std::vector<int> without_log = ranks_without_log();
    std::vector<int> ranks;
    for (const int device : id.members) {
      if (device >= 0) {
        ranks.push_back(global_[static_cast<std::size_t>(device)]);
      } else if (unknown == 1 && without_log.size() == 1) {
        ranks.push_back(without_log.front());
      } else {
        throw TraceError(fmt::format(
            "{}: communicator {} has {} ranks, but the logs initialize only {} of them: give "
            "every rank's log",
            detail::nccl::where(logs_, id.file, id.line), name(g), id.nranks,
            id.nranks - unknown));
      }
    }
    return ranks;
  }

  std::vector<int> ranks_without_log() const {
    std::vector<int> without;
    const Identity& world = logs_.identities[world_];
    for (std::size_t r = 0; r < world.members.size(); ++r) {
      if (world.members[r] < 0) without.push_back(static_cast<int>(r));
    }
    return without;
  }

  /// One NCCL group at a time: its operations posted, then the completed ones waited for;
  /// the ones that never completed stay open, for replay to block on at the rank's end. The
  /// groups after one that never completed on the same communicator never ran (NCCL runs a
  /// communicator's work in order): left out. Returns the operations emitted.
  std::vector<const Op*> emit_rank(TraceBuilder& b, int rank, const std::vector<Op>& ops,
                                   const std::vector<bool>& stuck) {
    std::vector<const Op*> emitted;
    emitted.reserve(ops.size());
    b.reserve(rank, ops.size());
    std::vector<bool> stopped(logs_.identities.size(), false);  // by communicator
    std::vector<std::uint64_t> posted;
    std::size_t i = 0;
    while (i < ops.size()) {
      std::size_t end = i + 1;
      while (end < ops.size() && ops[end].record == ops[i].record && ops[end].op_count == ops[i].op_count) ++end;
      const std::uint32_t identity = logs_.records[ops[i].record].identity;
      if (stopped[identity]) {
        left_out_ += end - i;
        i = end;
        continue;
      }
      posted.clear();
      for (std::size_t k = i; k < end; ++k) {
        posted.push_back(post(b, rank, ops[k]));
        emitted.push_back(&ops[k]);
      }
      for (std::size_t k = i; k < end; ++k) {
        if (stuck[k]) stopped[identity] = true;
        else b.wait(rank, posted[k - i]);
      }
      i = end;
    }
    return emitted;
  }

  std::uint64_t post(TraceBuilder& b, int rank, const Op& op) {
    const detail::nccl::CommRecord& record = logs_.records[op.record];
    const std::uint32_t group = group_[record.identity];
    // A peer or root may be a rank without a log: its world rank comes from group_ranks.
    const auto global = [&](int comm_rank) { return ranks_[record.identity][static_cast<std::size_t>(comm_rank)]; };
    if (op.kind == OpKind::send) return b.isend(rank, global(op.root), op.dtype, op.count, 0, group);
    if (op.kind == OpKind::recv) return b.irecv(rank, global(op.root), op.dtype, op.count, 0, group);
    return b.icollective(rank, op.kind, op.dtype, op.count, group,
                         takes_root(op.kind) ? global(op.root) : kNoRank, op.reduce);
  }

  /// Every operation is its own site (its log line): the sites live in blocks that their
  /// events share, rather than in an allocation each.
  CallSite& new_site() {
    if (!sites_ || sites_->size() == kSitesPerBlock) {
      sites_ = std::make_shared<std::vector<CallSite>>();
      sites_->reserve(kSitesPerBlock);  // never reallocated: events point into it
    }
    return sites_->emplace_back();
  }

  void finish_event(TraceEvent& e, const Op& op, bool stuck) {
    CallSite& site = new_site();
    site.file = logs_.files[op.file];
    site.line = static_cast<std::uint32_t>(op.line);
    site.function = nccl_function(op.kind);
    const auto type = detail::nccl::element_type(op.nccl_datatype);
    if (type && (type->elements != 1 || type->dtype == DataType::u8)) {
      site.label = std::to_string(op.nccl_count);
      site.label.append(" x ").append(type->name);
    }
    e.site = SiteRef(std::shared_ptr<const CallSite>(sites_, &site));
    e.source = {op.file, op.line};
    if (!stuck) return;
    e.status = OpStatus::pending;
    e.blocked = true;  // its rank's stream was stuck in it
    if (e.op == OpKind::recv) e.msg = {};
  }

  nlohmann::json config() const {
    const std::vector<int> without_log = ranks_without_log();
    return {{"program", "nccl-log"},
            {"nccl_format", detail::nccl::kNcclVersion},
            {"logs", logs_.files_with_lines},
            {"processes", logs_.processes.size()},
            {"communicators", logs_.identities.size()},
            {"ranks_without_log", without_log},
            {"skipped_lines", logs_.skipped_lines},
            {"left_out_after_pending", left_out_}};
  }

  const Logs& logs_;
  const std::uint32_t world_;
  std::vector<int> global_;            ///< by device: its world rank
  std::vector<std::uint32_t> group_;   ///< by communicator: its trace group
  std::vector<std::vector<int>> ranks_;  ///< by communicator used: its ranks' world ranks
  std::uint64_t left_out_ = 0;         ///< operations after one that never completed
  static constexpr std::size_t kSitesPerBlock = 1024;
  std::shared_ptr<std::vector<CallSite>> sites_;  ///< the block being filled
};

/// In a folder, every visible file is read as a log: NCCL_DEBUG_FILE names them freely, and
/// a file without NCCL lines (a README) adds nothing.
bool is_visible(const std::filesystem::path& path) {
  return !path.filename().string().starts_with(".");
}

}  // namespace

Trace import_nccl_logs(const std::vector<NcclLogFile>& logs) {
  if (logs.empty()) throw TraceError("no NCCL logs to import");
  const Logs read = detail::nccl::read_logs(logs);
  return Emitter(read).emit();
}

Trace read_nccl_logs(const std::vector<std::filesystem::path>& inputs) {
  std::vector<NcclLogFile> files;
  for (const auto& path : input_files(inputs, is_visible, "files")) {
    files.push_back({path.string(), read_input_file(path, "an NCCL log", kMaxLogBytes)});
  }
  return import_nccl_logs(files);
}

}  // namespace ranklab
