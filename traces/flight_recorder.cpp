// The Flight Recorder importer (mapping in flight_recorder.hpp): dumps -> one world and its
// groups -> each rank's entries re-issued into a TraceBuilder -> messages matched, pending
// entries marked, call sites attached.
#include "traces/flight_recorder.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <set>

#include "traces/call_site_table.hpp"
#include "traces/error.hpp"
#include "traces/fr_dump.hpp"
#include "traces/input_file.hpp"
#include "traces/quote_input.hpp"
#include "traces/trace_builder.hpp"

namespace ranklab {
namespace {

using detail::FrDump;
using detail::FrEntry;
using detail::FrOpKind;
using detail::FrProcessGroup;

constexpr std::uintmax_t kMaxDumpBytes = std::uintmax_t{1} << 30;
constexpr int kMaxWorld = 1 << 20;
constexpr int kMaxRebuilds = 4;

template <typename... Args>
[[noreturn]] void fail_entry(const FrDump& dump, const FrEntry& e, fmt::format_string<Args...> format,
                             Args&&... args) {
  throw TraceError(fmt::format("{}: entry {}: {}", dump.file, e.index,
                               fmt::format(format, std::forward<Args>(args)...)));
}

/// Process group names are decimal ids in torch; order them as numbers, "0" first.
bool group_order(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return a.size() < b.size();
  return a < b;
}

struct World {
  int size = 0;
  bool ranklab_made = false;  ///< every dump is `ranklab export`'s: group names are their descs
  std::map<std::string, FrProcessGroup> groups;
  std::vector<std::string> order;               ///< groups but "0", in trace order
  std::map<std::string, std::uint32_t> index;  ///< pg name -> trace group index
};

/// The union of every dump's pg_config; a group that two dumps describe differently is an error.
World make_world(const std::vector<FrDump>& dumps) {
  World world;
  std::map<std::string, std::string> described_by;
  for (const FrDump& dump : dumps) {
    for (const auto& [name, group] : dump.groups) {
      const auto [it, added] = world.groups.emplace(name, group);
      if (!added && it->second.ranks != group.ranks) {
        throw TraceError(fmt::format(
            "{}: pg_config {} has ranks [{}], but {} gives [{}]", dump.file, quote_input(name),
            fmt::join(group.ranks, ", "), described_by[name], fmt::join(it->second.ranks, ", ")));
      }
      described_by.emplace(name, dump.file);
    }
  }
  int largest = -1;
  for (const auto& [name, group] : world.groups) largest = std::max(largest, group.ranks.back());
  for (const FrDump& dump : dumps) largest = std::max(largest, dump.rank);
  world.size = largest + 1;
  if (const auto it = world.groups.find("0"); it != world.groups.end()) {
    const std::vector<int>& ranks = it->second.ranks;
    if (ranks.front() != 0 || ranks.back() != static_cast<int>(ranks.size()) - 1) {
      throw TraceError(fmt::format("{}: pg_config '0' (the default group) is not ranks 0..N-1",
                                   described_by["0"]));
    }
    world.size = static_cast<int>(ranks.size());
    for (const FrDump& dump : dumps) {
      if (dump.rank >= world.size) {
        throw TraceError(fmt::format("{}: rank {} is outside the world of {} ranks (pg_config '0')",
                                     dump.file, dump.rank, world.size));
      }
    }
    for (const auto& [name, group] : world.groups) {
      if (group.ranks.back() >= world.size) {
        throw TraceError(fmt::format("{}: pg_config {} names rank {}, outside the world of {}",
                                     described_by[name], quote_input(name), group.ranks.back(), world.size));
      }
    }
  }
  if (world.size > kMaxWorld) throw TraceError(fmt::format("a world of {} ranks is too large", world.size));
  return world;
}

std::string group_label(const FrProcessGroup& group, bool ranklab_made) {
  // ranklab's export writes a group's trace name as its desc: read it back as it was.
  if (ranklab_made && !group.desc.empty()) return group.desc;
  if (group.desc.empty() || group.desc == "undefined") return "pg" + group.name;
  return fmt::format("pg{}:{}", group.name, group.desc);
}

/// Every entry's group exists and holds the rank; a p2p entry's ranks fit the group.
void check_membership(const FrDump& dump, const World& world) {
  for (const FrEntry& e : dump.entries) {
    const auto it = world.groups.find(e.pg);
    if (it == world.groups.end()) {
      fail_entry(dump, e, "process group {} is not in pg_config", quote_input(e.pg));
    }
    const std::vector<int>& ranks = it->second.ranks;
    const auto self = std::find(ranks.begin(), ranks.end(), dump.rank);
    if (self == ranks.end()) {
      fail_entry(dump, e, "rank {} is not in process group {} (ranks [{}])", dump.rank,
                 quote_input(e.pg),
                 fmt::join(ranks, ", "));
    }
    if (e.kind != FrOpKind::send && e.kind != FrOpKind::recv) continue;
    const int group_rank = static_cast<int>(self - ranks.begin());
    if (e.self_group_rank != group_rank) {
      fail_entry(dump, e, "{} is issued by group rank {}, but rank {} is group rank {} of {}",
                 quote_input(e.profiling_name), e.self_group_rank, dump.rank, group_rank,
                 quote_input(e.pg));
    }
    if (e.peer_group_rank >= static_cast<int>(ranks.size()) || e.peer_group_rank == group_rank) {
      fail_entry(dump, e, "{} names peer {}, not another rank of {} ({} ranks)",
                 quote_input(e.profiling_name), e.peer_group_rank, quote_input(e.pg), ranks.size());
    }
  }
}

/// Per process group, the oldest collective seq id every rank's dump still holds.
std::map<std::string, std::uint64_t> common_window(const std::vector<FrDump>& dumps) {
  std::map<std::string, std::uint64_t> base;
  for (const FrDump& dump : dumps) {
    std::map<std::string, std::uint64_t> first;
    for (const FrEntry& e : dump.entries) {
      if (e.kind == FrOpKind::collective) first.emplace(e.pg, e.collective_seq);
    }
    for (const auto& [pg, seq] : first) base[pg] = std::max(base[pg], seq);
  }
  return base;
}

/// Per entry: the index of the coalesced entry closing its group, or -1.
std::vector<std::ptrdiff_t> coalesced_groups(const FrDump& dump) {
  const auto& entries = dump.entries;
  std::vector<std::ptrdiff_t> closer(entries.size(), -1);
  for (std::size_t m = 0; m < entries.size(); ++m) {
    if (entries[m].kind != FrOpKind::coalesced) continue;
    for (std::size_t j = m; j-- > 0;) {
      const FrEntry& e = entries[j];
      if (e.kind == FrOpKind::coalesced || e.pg != entries[m].pg ||
          e.collective_seq != entries[m].collective_seq || e.p2p_seq != entries[m].p2p_seq) {
        break;
      }
      closer[j] = static_cast<std::ptrdiff_t>(m);
    }
  }
  return closer;
}

struct LeftOut {
  std::uint64_t after_pending = 0;
  std::uint64_t before_window = 0;
  std::uint64_t unmatched_completed = 0;
};

/// The import of every dump into one builder; `skip` holds (rank, entry) pairs left out.
class Emitter {
 public:
  Emitter(const std::vector<FrDump>& dumps, const World& world,
          std::map<std::string, std::uint64_t> window)
      : dumps_(dumps), world_(world), window_(std::move(window)) {}

  BuiltTrace emit(const std::set<std::pair<int, std::size_t>>& skip, LeftOut& left_out) {
    TraceBuilder builder(world_.size);
    for (const std::string& name : world_.order) {
      builder.add_group(group_label(world_.groups.at(name), world_.ranklab_made),
                        world_.groups.at(name).ranks);
    }
    origin_.assign(static_cast<std::size_t>(world_.size), {});
    left_out.after_pending = left_out.before_window = 0;
    for (const FrDump& dump : dumps_) emit_rank(builder, dump, skip, left_out);
    return builder.build();
  }

  /// The dump and entry behind rank `rank`'s operation `seq`.
  const FrEntry& origin(int rank, std::uint64_t seq) const {
    return *origin_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(seq)];
  }

 private:
  bool in_window(const FrEntry& e, const std::vector<FrEntry>& entries,
                 const std::vector<std::ptrdiff_t>& closer, std::size_t i) const {
    const bool collective = e.kind == FrOpKind::collective ||
                            (e.kind == FrOpKind::coalesced && i > 0 && closer[i - 1] == static_cast<std::ptrdiff_t>(i) &&
                             entries[i - 1].kind == FrOpKind::collective);
    if (!collective) return true;
    const auto it = window_.find(e.pg);
    return it == window_.end() || e.collective_seq >= it->second;
  }

  std::uint64_t post(TraceBuilder& b, int rank, const FrEntry& e) {
    const FrProcessGroup& group = world_.groups.at(e.pg);
    const std::uint32_t index = world_.index.at(e.pg);
    if (e.kind == FrOpKind::send || e.kind == FrOpKind::recv) {
      const int peer = group.ranks[static_cast<std::size_t>(e.peer_group_rank)];
      return e.kind == FrOpKind::send ? b.isend(rank, peer, e.dtype, e.count, 0, index)
                                      : b.irecv(rank, peer, e.dtype, e.count, 0, index);
    }
    std::uint64_t count = e.count;
    if (e.op == OpKind::all_to_all) count /= group.ranks.size();  // one peer's chunk
    const bool rooted = e.op == OpKind::broadcast || e.op == OpKind::reduce ||
                        e.op == OpKind::gather || e.op == OpKind::scatter;
    return b.icollective(rank, e.op, e.dtype, count, index, rooted ? group.ranks.front() : kNoRank);
  }

  void emit_rank(TraceBuilder& b, const FrDump& dump, const std::set<std::pair<int, std::size_t>>& skip,
                 LeftOut& left_out) {
    const int rank = dump.rank;
    auto& origin = origin_[static_cast<std::size_t>(rank)];
    const std::vector<std::ptrdiff_t> closer = coalesced_groups(dump);
    std::set<std::string> stuck;  // groups with an entry that never completed
    std::map<std::size_t, std::vector<std::pair<std::uint64_t, bool>>> members;  // closer -> ops
    for (std::size_t i = 0; i < dump.entries.size(); ++i) {
      const FrEntry& e = dump.entries[i];
      if (skip.count({rank, i}) != 0) continue;
      if (!in_window(e, dump.entries, closer, i)) {
        ++left_out.before_window;
        continue;
      }
      if (stuck.count(e.pg) != 0) {
        ++left_out.after_pending;
        continue;
      }
      if (e.kind == FrOpKind::coalesced) {
        // The group's end: wait for its members, or stay stuck in the first that never ended.
        for (const auto& [seq, completed] : members[i]) {
          if (completed) b.wait(rank, seq);
          else stuck.insert(e.pg);
        }
        continue;
      }
      if (e.op == OpKind::all_to_all && e.count % world_.groups.at(e.pg).ranks.size() != 0) {
        fail_entry(dump, e, "all_to_all of {} elements does not split over the {} ranks of {}",
                   e.count, world_.groups.at(e.pg).ranks.size(), quote_input(e.pg));
      }
      const std::uint64_t seq = post(b, rank, e);
      if (origin.size() <= seq) origin.resize(seq + 1, nullptr);
      origin[seq] = &e;
      if (closer[i] >= 0) {
        members[static_cast<std::size_t>(closer[i])].emplace_back(seq, e.completed);
      } else if (e.completed) {
        b.wait(rank, seq);
      } else {
        stuck.insert(e.pg);
      }
    }
  }

  const std::vector<FrDump>& dumps_;
  const World& world_;
  const std::map<std::string, std::uint64_t> window_;  ///< common_window()
  std::vector<std::vector<const FrEntry*>> origin_;
};

/// In a folder, dumps are the files whose name (less its extension) ends in their rank, as
/// torch names them; anything else beside them (a README, notes) is not read.
bool is_dump_name(const std::filesystem::path& path) {
  const std::string stem = path.stem().string();
  return !stem.empty() && !stem.starts_with(".") &&
         std::isdigit(static_cast<unsigned char>(stem.back()));
}

/// The dumps' host clocks as the operations' time (vt_post_ns, vt_end_ns: ns after the
/// earliest kept entry was created), when every operation has its time_created_ns; what the
/// header's config says of it ("time"), or null when some entry has none.
nlohmann::json apply_timestamps(Trace& trace, const Emitter& emitter, bool one_clock) {
  std::int64_t origin = std::numeric_limits<std::int64_t>::max();
  for (const auto& events : trace.ranks) {
    for (const TraceEvent& e : events) {
      const FrEntry& entry = emitter.origin(e.rank, e.rank_seq);
      if (entry.created_ns == kNoTime) return nullptr;
      origin = std::min(origin, entry.created_ns);
    }
  }
  if (origin == std::numeric_limits<std::int64_t>::max()) return nullptr;
  for (auto& events : trace.ranks) {
    for (TraceEvent& e : events) {
      const FrEntry& entry = emitter.origin(e.rank, e.rank_seq);
      e.vt_post_ns = entry.created_ns - origin;
      if (e.status == OpStatus::pending) continue;
      // Completion as the watchdog saw it; without it, the latest time the entry has.
      const std::int64_t end = entry.completed_ns != kNoTime ? entry.completed_ns
                                                             : std::max(entry.created_ns, entry.started_ns);
      e.vt_end_ns = std::max(e.vt_post_ns, end - origin);
    }
  }
  return {{"clock", "time_created_ns, time_discovered_completed_ns"},
          {"one_clock", one_clock},
          {"origin_ns", origin}};
}

/// The threads each rank's entries name (format 2.10), for the header: {"RANK": [names]}.
nlohmann::json thread_names(const std::vector<FrDump>& dumps) {
  nlohmann::json threads = nlohmann::json::object();
  for (const FrDump& dump : dumps) {
    std::set<std::string> names;
    for (const FrEntry& e : dump.entries) {
      if (e.thread_name.empty() && e.thread_id.empty()) continue;
      names.insert(e.thread_id.empty() ? e.thread_name : fmt::format("{} ({})", e.thread_name, e.thread_id));
    }
    if (!names.empty()) threads[std::to_string(dump.rank)] = names;
  }
  return threads;
}

}  // namespace

Trace import_flight_recorder(const std::vector<FrDumpFile>& files) {
  if (files.empty()) throw TraceError("no Flight Recorder dumps to import");
  std::vector<FrDump> dumps;
  std::map<int, std::string> by_rank;
  for (const FrDumpFile& file : files) {
    dumps.push_back(detail::read_fr_dump(file.bytes, file.name));
    const auto [it, added] = by_rank.emplace(dumps.back().rank, file.name);
    if (!added) {
      throw TraceError(fmt::format("{}: a second dump of rank {} (the first is {})", file.name,
                                   dumps.back().rank, it->second));
    }
  }
  World world = make_world(dumps);
  world.ranklab_made = std::all_of(dumps.begin(), dumps.end(), [](const FrDump& d) {
    return d.comm_lib_version == detail::kRanklabCommLib;
  });
  // Trace groups in pg_config's order (as numbers), the default group as `world`.
  for (const auto& [name, group] : world.groups) {
    if (name != "0") world.order.push_back(name);
  }
  std::sort(world.order.begin(), world.order.end(), group_order);
  world.index["0"] = 0;
  for (std::size_t i = 0; i < world.order.size(); ++i) {
    world.index[world.order[i]] = static_cast<std::uint32_t>(i + 1);
  }
  for (const FrDump& dump : dumps) check_membership(dump, world);
  Emitter emitter(dumps, world, common_window(dumps));

  std::set<std::pair<int, std::size_t>> skip;
  LeftOut left_out;
  BuiltTrace built = emitter.emit(skip, left_out);
  // Completed messages whose partner fell out of the other rank's ring buffer: leave out.
  for (int round = 0; round < kMaxRebuilds && !built.unmatched.empty(); ++round) {
    std::size_t added = 0;
    for (const EventRef& ref : built.unmatched) {
      const TraceEvent& e = built.trace.ranks[static_cast<std::size_t>(ref.rank)][ref.index];
      const FrEntry& entry = emitter.origin(ref.rank, e.rank_seq);
      if (entry.completed && skip.emplace(ref.rank, entry.index).second) ++added;
    }
    if (added == 0) break;
    left_out.unmatched_completed += added;
    built = emitter.emit(skip, left_out);
  }

  Trace& trace = built.trace;
  // Each operation names its dump and entry (index + 1 as its `line`: source_of says
  // "FILE: entry N"), so that a replay's refusal says where it is.
  std::map<int, std::uint32_t> file_of_rank;
  for (const FrDump& dump : dumps) {
    file_of_rank.emplace(dump.rank, static_cast<std::uint32_t>(trace.sources.files.size()));
    trace.sources.files.push_back(dump.file);
  }
  CallSiteTable sites;  // a collective's entries on every rank share its frame
  for (auto& events : trace.ranks) {
    for (TraceEvent& e : events) {
      const FrEntry& entry = emitter.origin(e.rank, e.rank_seq);
      e.source = {file_of_rank.at(e.rank), entry.index + 1};
      e.site = sites.intern(entry.site);
      if (entry.completed) continue;
      e.status = OpStatus::pending;
      e.blocked = true;  // the rank's stream was stuck in it (replay blocks on it at the end)
      if (e.op == OpKind::recv) e.msg = {};
    }
  }
  // ranklab's export writes one clock (its run's); a job's dumps carry each host's own.
  const nlohmann::json time = apply_timestamps(trace, emitter, world.ranklab_made);
  std::vector<int> without_dump;
  for (int r = 0; r < world.size; ++r) {
    if (by_rank.count(r) == 0) without_dump.push_back(r);
  }
  trace.header.version = imported_version(trace, "1.2");
  trace.header.config = {{"program", "pytorch-fr"},
                         {"fr_version", dumps.front().version},
                         {"dumps", dumps.size()},
                         {"ranks_without_dump", without_dump},
                         {"left_out",
                          {{"after_pending", left_out.after_pending},
                           {"before_window", left_out.before_window},
                           {"unmatched_completed", left_out.unmatched_completed}}},
                         {"time", time},
                         {"threads", thread_names(dumps)}};
  return trace;
}

Trace read_flight_recorder(const std::vector<std::filesystem::path>& inputs) {
  std::vector<FrDumpFile> files;
  for (const auto& path : input_files(
           inputs, is_dump_name, "dumps (files named for their rank, as nccl_trace_rank_3)")) {
    files.push_back(
        {path.string(), read_input_file(path, "a Flight Recorder dump", kMaxDumpBytes)});
  }
  return import_flight_recorder(files);
}

}  // namespace ranklab
