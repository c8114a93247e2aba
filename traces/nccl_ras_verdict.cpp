#include "traces/nccl_ras_verdict.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "traces/rank_list.hpp"

namespace ranklab {
namespace {

/// "0-3, 6, 8-9": ascending ranks, runs of three or more as ranges, as every report lists them.
std::string ranges(const std::vector<int>& ranks) { return detail::join_ranks(ranks); }

std::string comm_name(const RasCommunicator& comm) {
  return fmt::format("communicator {}", comm.hash);
}

/// "ranks 4-7 stopped at all_reduce count 17 while ranks 0-3 reached 18", per group below
/// the highest count.
std::vector<std::string> split_lines(const RasCountSplit& split) {
  std::vector<std::string> out;
  if (split.groups.empty()) return out;
  const RasCountGroup& top = split.groups.front();
  const std::string_view name = ras_collective_name(split.kind);
  for (std::size_t g = 1; g < split.groups.size(); ++g) {
    const RasCountGroup& group = split.groups[g];
    const std::string who = describe_ranks(group.ranks);
    const std::string stop = group.launched == 0
                                 ? fmt::format("{} launched no {}", who, name)
                                 : fmt::format("{} stopped at {} count {}", who, name, group.launched);
    out.push_back(fmt::format("{} while {} reached {}", stop, describe_ranks(top.ranks), top.launched));
  }
  return out;
}

std::string missing_line(const RasMissingRank& rank) {
  std::string where;
  if (rank.pid >= 0) where = fmt::format(" {} on node {} (GPU {})", rank.pid, rank.host, rank.cuda_dev);
  if (!rank.unresponsive) {
    return fmt::format("rank {} is missing: its process{} answered but no longer holds the "
                       "communicator (destroyed or aborted it)", rank.rank, where);
  }
  return fmt::format("rank {} is missing: its process{} {}", rank.rank, where,
                     rank.dead ? "is considered dead (unreachable for 60 s)" : "does not answer");
}

std::string counts_text(const std::array<std::uint64_t, kRasCollectives>& counts) {
  std::string out;
  for (std::size_t k = kRasCollectives; k-- > 0;) {  // all_reduce first: the usual one
    if (counts[k] == 0) continue;
    if (!out.empty()) out += ", ";
    out += fmt::format("{} {}", ras_collective_name(k), counts[k]);
  }
  return out.empty() ? "no collective launched yet" : out;
}

/// Whether RAS showed anything different of a communicator in two snapshots.
bool same_evidence(const RasCommunicator& a, const RasCommunicator& b) {
  return a.counts == b.counts && a.splits == b.splits && a.missing_count == b.missing_count &&
         a.missing == b.missing;
}

const RasCommunicator* find(const RasSnapshot& snapshot, const RasCommunicator& comm) {
  for (const RasCommunicator& other : snapshot.communicators) {
    if (other.hash == comm.hash && other.size == comm.size) return &other;
  }
  return nullptr;
}

/// "behind", "missing ranks", "errors", joined in that order; "in step" for none.
std::string state_of(bool behind, bool missing, bool errors) {
  std::string out;
  for (const auto& [on, name] : {std::pair{behind, "behind"}, std::pair{missing, "missing ranks"},
                                 std::pair{errors, "errors"}}) {
    if (on) out += out.empty() ? name : std::string(", ") + name;
  }
  return out.empty() ? "in step" : out;
}

/// The first initialization or asynchronous error RAS reports of the communicator's ranks.
const RasRankNote* first_error(const RasCommunicator& comm) {
  for (const RasRankNote& note : comm.notes) {
    if (note.what.find(" error: ") != std::string::npos) return &note;
  }
  return nullptr;
}

/// "rank 3 has status FINALIZE", "2 ranks report an asynchronous error: Remote process error".
std::string note_line(const RasRankNote& note) {
  const bool one = note.ranks.count == 1;
  if (note.what.starts_with("status ")) {
    return fmt::format("{} {} {}", describe_ranks(note.ranks), one ? "has" : "have", note.what);
  }
  return fmt::format("{} {} an {}", describe_ranks(note.ranks), one ? "reports" : "report", note.what);
}

/// Where to look: the processes of the ranks behind, when they are few and RAS names them.
constexpr std::size_t kProcessesShown = 4;

const RasRankProcess* process_of(const RasCommunicator& comm, int rank) {
  const auto at = std::lower_bound(comm.processes.begin(), comm.processes.end(), rank,
                                   [](const RasRankProcess& p, int r) { return p.rank < r; });
  return at != comm.processes.end() && at->rank == rank ? &*at : nullptr;
}

RasCommunicatorVerdict judge(const RasCommunicator& comm) {
  RasCommunicatorVerdict out{comm.hash, comm.label, comm.size, "in step", {}, std::nullopt};
  for (const RasCountSplit& split : comm.splits) {
    for (std::string& line : split_lines(split)) out.lines.push_back(std::move(line));
    for (std::size_t g = 1; g < split.groups.size(); ++g) {
      const std::vector<int>& behind = split.groups[g].ranks.ranks;
      if (behind.size() > kProcessesShown) continue;
      for (int rank : behind) {
        if (const RasRankProcess* p = process_of(comm, rank)) {
          out.lines.push_back(fmt::format("rank {} is process {} on node {} (GPU {})", rank, p->pid, p->host, p->cuda_dev));
        }
      }
    }
  }
  for (const RasMissingRank& rank : comm.missing) out.lines.push_back(missing_line(rank));
  const int unnamed = comm.missing_count - static_cast<int>(comm.missing.size());
  if (unnamed > 0) {
    out.lines.push_back(fmt::format("{} {} missing (RAS does not name {})", unnamed,
                                    unnamed == 1 ? "rank is" : "ranks are", unnamed == 1 ? "it" : "them"));
  }
  for (const RasRankNote& note : comm.notes) out.lines.push_back(note_line(note));
  const bool behind = !comm.splits.empty();
  const bool missing = comm.missing_count > 0;
  out.state = state_of(behind, missing, first_error(comm) != nullptr);
  if (!behind && comm.counts) {
    out.lines.insert(out.lines.begin(), fmt::format("every {}rank launched {}", missing ? "answering " : "",
                                                    counts_text(*comm.counts)));
  }
  return out;
}

}  // namespace

std::string describe_ranks(const RasRankSet& set) {
  if (static_cast<int>(set.ranks.size()) == set.count && set.count > 0) {
    return fmt::format("{} {}", set.count == 1 ? "rank" : "ranks", ranges(set.ranks));
  }
  const std::string count = fmt::format("{} {}", set.count, set.count == 1 ? "rank" : "ranks");
  if (set.ranks.empty()) return count;
  return fmt::format("{}, among them {}", count, ranges(set.ranks));
}

RasVerdict judge_ras(const std::vector<RasSnapshot>& snapshots) {
  RasVerdict out;
  const RasSnapshot& last = snapshots.back();
  bool behind = false;
  bool missing = false;
  const RasCommunicator* first_behind = nullptr;
  const RasCommunicator* first_missing = nullptr;
  const RasCommunicator* first_erring = nullptr;
  for (const RasCommunicator& comm : last.communicators) {
    RasCommunicatorVerdict verdict = judge(comm);
    if (snapshots.size() > 1) {
      if (const RasCommunicator* before = find(snapshots.front(), comm)) {
        verdict.moved = !same_evidence(*before, comm);
      }
    }
    if (!comm.splits.empty()) {
      behind = true;
      if (first_behind == nullptr || comm.size > first_behind->size) first_behind = &comm;
    }
    if (comm.missing_count > 0) {
      missing = true;
      if (first_missing == nullptr || comm.size > first_missing->size) first_missing = &comm;
    }
    if (first_error(comm) != nullptr && (first_erring == nullptr || comm.size > first_erring->size)) {
      first_erring = &comm;
    }
    out.communicators.push_back(std::move(verdict));
  }
  out.unnamed_in_step = last.unnamed_in_step;
  out.status = state_of(behind, missing, first_erring != nullptr);
  for (const RasProcess& process : last.processes_missing) {
    out.job_lines.push_back(fmt::format("process {} on node {} (GPU {}) {}", process.pid, process.host,
                                        process.gpus,
                                        process.dead ? "is considered dead (unreachable for 60 s)"
                                                     : "did not answer RAS's query"));
  }
  if (last.timeouts > 0) {
    out.job_lines.push_back(fmt::format("RAS's query met {} communication timeout{}", last.timeouts,
                                        last.timeouts == 1 ? "" : "s"));
  }

  if (first_missing != nullptr) {
    const int unnamed = first_missing->missing_count - static_cast<int>(first_missing->missing.size());
    out.headline = fmt::format("{}: on {}, {}", out.status, comm_name(*first_missing),
                               first_missing->missing.empty()
                                   ? fmt::format("{} {} missing", unnamed, unnamed == 1 ? "rank is" : "ranks are")
                                   : missing_line(first_missing->missing.front()));
  } else if (first_erring != nullptr) {
    out.headline = fmt::format("{}: on {}, {}", out.status, comm_name(*first_erring),
                               note_line(*first_error(*first_erring)));
  } else if (first_behind != nullptr) {
    // Every split has two counts or more (both readers make sure), so a first line.
    out.headline = fmt::format("behind: on {}, {}", comm_name(*first_behind),
                               split_lines(first_behind->splits.front()).at(0));
  } else {
    out.headline = "in step: every rank of every communicator has launched the same collectives "
                   "(a job hung in step waits inside one collective, or outside NCCL)";
  }

  const bool unnamed = std::any_of(last.communicators.begin(), last.communicators.end(), [](const RasCommunicator& c) {
    return std::any_of(c.splits.begin(), c.splits.end(), [](const RasCountSplit& s) {
      return std::any_of(s.groups.begin(), s.groups.end(), [](const RasCountGroup& g) {
        return static_cast<int>(g.ranks.ranks.size()) < g.ranks.count;
      });
    });
  });
  if (unnamed) {
    out.notes.push_back("RAS's text form names the ranks of a count only when they are few (an "
                        "outlier); `ncclras -f json` (NCCL 2.28.7 and later) names every rank");
  }
  if (snapshots.size() == 1 && behind) {
    out.notes.push_back("one snapshot shows where ranks are, not that they stay there: NCCL's "
                        "collectives can outrun RAS's query; take another a minute later and give "
                        "both (`ranklab stats --format nccl-ras FIRST LATER`): counts that do not "
                        "move are a hang");
  }
  if (snapshots.size() > 1) {
    int stuck = 0;
    int moving = 0;
    for (const RasCommunicatorVerdict& v : out.communicators) {
      if (v.moved && *v.moved) ++moving;
      if (v.moved && !*v.moved) ++stuck;
    }
    out.notes.push_back(fmt::format("between the first and the last of {} snapshots: {} "
                                    "communicator{} moved, {} did not (stuck)",
                                    snapshots.size(), moving, moving == 1 ? "" : "s", stuck));
    // The headline's communicator, when its ranks are behind and nothing of it moved.
    if (first_missing == nullptr && first_erring == nullptr && first_behind != nullptr) {
      for (const RasCommunicatorVerdict& v : out.communicators) {
        if (v.hash == first_behind->hash && v.size == first_behind->size && v.moved == false) {
          out.headline = "stuck, " + out.headline;
          break;
        }
      }
    }
  }
  return out;
}

std::string format_ras_verdict(const RasVerdict& verdict, const std::vector<RasSnapshot>& snapshots,
                               const std::string& name) {
  const RasSnapshot& last = snapshots.back();
  const std::size_t comms = last.communicators.size() + static_cast<std::size_t>(last.unnamed_in_step);
  std::string out = fmt::format("NCCL RAS snapshot{} {} ({} form{}): {} communicator{}\n",
                                snapshots.size() == 1 ? "" : "s", name, last.form,
                                last.nccl_version.empty() ? "" : ", NCCL " + last.nccl_version,
                                comms, comms == 1 ? "" : "s");
  out += "verdict: " + verdict.headline + "\n";
  for (const RasCommunicatorVerdict& comm : verdict.communicators) {
    std::string what = comm.label.empty() ? "" : comm.label + ", ";
    what += comm.size > 0 ? fmt::format("{} ranks", comm.size) : "size unknown";
    std::string moved;
    if (comm.moved) moved = *comm.moved ? " (moved since the first snapshot)" : " (nothing moved since the first snapshot)";
    out += fmt::format("communicator {} ({}): {}{}\n", comm.hash, what, comm.state, moved);
    for (const std::string& line : comm.lines) out += "  " + line + "\n";
  }
  if (verdict.unnamed_in_step > 0) {
    out += fmt::format("{} {}communicator{} in step (the text form shows no counts for {})\n",
                       verdict.unnamed_in_step, verdict.communicators.empty() ? "" : "more ",
                       verdict.unnamed_in_step == 1 ? "" : "s", verdict.unnamed_in_step == 1 ? "it" : "them");
  }
  for (const std::string& line : verdict.job_lines) out += "job: " + line + "\n";
  for (const std::string& note : verdict.notes) out += "note: " + note + "\n";
  return out;
}

nlohmann::ordered_json ras_verdict_to_json(const RasVerdict& verdict,
                                           const std::vector<RasSnapshot>& snapshots) {
  nlohmann::ordered_json out;
  nlohmann::ordered_json files = nlohmann::ordered_json::array();
  for (const RasSnapshot& s : snapshots) {
    files.push_back({{"file", s.file}, {"form", s.form}, {"nccl_version", s.nccl_version},
                     {"timestamp", s.timestamp}});
  }
  out["snapshots"] = files;
  out["verdict"] = verdict.status;
  out["headline"] = verdict.headline;
  nlohmann::ordered_json comms = nlohmann::ordered_json::array();
  const RasSnapshot& last = snapshots.back();
  for (std::size_t c = 0; c < verdict.communicators.size(); ++c) {
    const RasCommunicatorVerdict& v = verdict.communicators[c];
    const RasCommunicator& comm = last.communicators[c];
    nlohmann::ordered_json item;
    item["hash"] = v.hash;
    item["label"] = v.label;
    item["size"] = v.size;
    item["state"] = v.state;
    item["moved"] = v.moved ? nlohmann::ordered_json(*v.moved) : nlohmann::ordered_json(nullptr);
    if (comm.counts) {
      nlohmann::ordered_json counts;
      for (std::size_t k = 0; k < kRasCollectives; ++k) counts[std::string(ras_collective_name(k))] = (*comm.counts)[k];
      item["counts"] = counts;
    } else {
      item["counts"] = nullptr;
    }
    nlohmann::ordered_json behind = nlohmann::ordered_json::array();
    for (const RasCountSplit& split : comm.splits) {
      const RasCountGroup& top = split.groups.front();
      for (std::size_t g = 1; g < split.groups.size(); ++g) {
        const RasCountGroup& group = split.groups[g];
        nlohmann::ordered_json processes = nlohmann::ordered_json::array();
        for (int rank : group.ranks.ranks) {
          if (const RasRankProcess* p = process_of(comm, rank)) {
            processes.push_back({{"rank", rank}, {"host", p->host}, {"pid", p->pid}, {"cuda_dev", p->cuda_dev}});
          }
        }
        behind.push_back({{"collective", ras_collective_name(split.kind)},
                          {"stopped_at", group.launched},
                          {"ranks", group.ranks.ranks},
                          {"rank_count", group.ranks.count},
                          {"reached", top.launched},
                          {"ahead_ranks", top.ranks.ranks},
                          {"ahead_rank_count", top.ranks.count},
                          {"processes", processes}});
      }
    }
    item["behind"] = behind;
    nlohmann::ordered_json missing = nlohmann::ordered_json::array();
    for (const RasMissingRank& rank : comm.missing) {
      missing.push_back({{"rank", rank.rank}, {"host", rank.host}, {"pid", rank.pid},
                         {"cuda_dev", rank.cuda_dev}, {"unresponsive", rank.unresponsive},
                         {"dead", rank.dead}});
    }
    item["missing"] = missing;
    item["missing_count"] = comm.missing_count;
    nlohmann::ordered_json notes = nlohmann::ordered_json::array();
    for (const RasRankNote& note : comm.notes) {
      notes.push_back({{"what", note.what}, {"ranks", note.ranks.ranks}, {"rank_count", note.ranks.count}});
    }
    item["notes"] = notes;
    item["lines"] = v.lines;
    comms.push_back(std::move(item));
  }
  out["communicators"] = comms;
  out["unnamed_in_step"] = verdict.unnamed_in_step;
  out["job"] = verdict.job_lines;
  out["notes"] = verdict.notes;
  return out;
}

}  // namespace ranklab
