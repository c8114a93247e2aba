// The text form of a RAS snapshot (traces/nccl_ras.hpp), line by line as NCCL 2.30.7's
// src/ras/client_support.cc prints it (rasClientRunInit, rasClientRunComms,
// rasClientBreakDownErrors).
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>

#include "traces/detail/json_fields.hpp"
#include "traces/detail/words.hpp"
#include "traces/error.hpp"
#include "traces/nccl_ras.hpp"
#include "traces/quote_input.hpp"
#include "traces/text.hpp"

namespace ranklab::detail::ras {
namespace {

using detail::fail;

constexpr int kMaxRank = 1 << 24;

/// Consumes `prefix` from `text` if it starts with it.
bool eat(std::string_view& text, std::string_view prefix) {
  if (!text.starts_with(prefix)) return false;
  text.remove_prefix(prefix.size());
  return true;
}

/// The decimal number at the front of `text`, consumed; fails naming `what` otherwise.
template <typename T>
T number(std::string_view& text, std::string_view what) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  const std::optional<T> value = parse_whole<T>(text.substr(0, digits));
  if (!value) fail("{} is not a number: {}", what, quote_input(text.substr(0, std::max<std::size_t>(digits, 1))));
  text.remove_prefix(digits);
  return *value;
}

int rank_number(std::string_view& text) {
  const int rank = number<int>(text, "the rank");
  if (rank >= kMaxRank) fail("rank {} is too large", rank);
  return rank;
}

void expect(std::string_view& text, std::string_view word) {
  if (!eat(text, word)) fail("expected '{}' at {}", word, quote_input(text));
}

/// "Rank R -- GPU G managed by process P on node H", or "Rank R -- [process information not
/// found]", after the part up to " -- " was read: fills what the rest says.
template <typename Rank>
void read_process_tail(std::string_view rest, Rank& out) {
  if (rest == "[process information not found]") return;
  expect(rest, "GPU ");
  out.cuda_dev = number<int>(rest, "the GPU");
  if (eat(rest, " (NVML ")) {
    (void)number<int>(rest, "the NVML device");
    expect(rest, ")");
  }
  expect(rest, " managed by process ");
  out.pid = number<int>(rest, "the process id");
  expect(rest, " on node ");
  if (rest.empty()) fail("no node after 'on node'");
  out.host = std::string(rest);
}

/// Appends to a rank set, keeping it sorted and its count at least its names.
void add_rank(RasRankSet& set, int rank) {
  const auto at = std::lower_bound(set.ranks.begin(), set.ranks.end(), rank);
  if (at != set.ranks.end() && *at == rank) fail("rank {} named twice", rank);
  set.ranks.insert(at, rank);
}

/// A row of the "Communicators..." table.
struct TableRow {
  int comms = 0;
  int ranks_per_comm = 0;
  bool ok = false;
};

enum class Section { preamble, table, errors, warnings };
enum class Block {
  none,
  job_incomplete,   // INCOMPLETE: processes without data
  job_dead,         // DEAD
  timeout,          // TIMEOUT
  comm_incomplete,  // #g-c (hash) INCOMPLETE
  comm_error,       // #g-c (hash) ERROR
  comm_mismatch,    // #g-c (hash) MISMATCH
};

class TextReader {
 public:
  TextReader(std::string_view name, std::string_view text) : text_(text) {
    out_.file = std::string(name);
    out_.form = "text";
  }

  RasSnapshot read() {
    std::size_t number = 0;
    std::string_view rest = text_;
    while (!rest.empty()) {
      const void* newline = std::memchr(rest.data(), '\n', rest.size());
      const std::size_t length =
          newline ? static_cast<std::size_t>(static_cast<const char*>(newline) - rest.data()) : rest.size();
      std::string_view line = rest.substr(0, length);
      rest.remove_prefix(newline ? length + 1 : length);
      ++number;
      if (line.ends_with('\r')) line.remove_suffix(1);
      line_ = static_cast<int>(number);
      try {
        read_line(line);
      } catch (const LineError& error) {
        throw TraceError(fmt::format("{}:{}: {}", out_.file, number, error.what()));
      }
    }
    close_split();
    if (!seen_table_) {
      throw TraceError(fmt::format("{}: no 'Communicators...' table: not what ncclras prints "
                                   "(run `ncclras` or `ncclras -f json` on a node of the job)",
                                   out_.file));
    }
    for (RasCommunicator& comm : out_.communicators) name_the_rest(comm);
    return std::move(out_);
  }

 private:
  void read_line(std::string_view line) {
    if (trim(line).empty()) {
      if (section_ == Section::table && in_rows_) in_rows_ = false;
      return;
    }
    if (line.starts_with("NCCL version ")) {
      std::string_view v = line.substr(13);
      v = v.substr(0, v.find(' '));
      if (v.empty() || v.find_first_not_of("0123456789.") != std::string_view::npos) {
        fail("expected a version after 'NCCL version': {}", quote_input(line));
      }
      out_.nccl_version = std::string(v);
      return;
    }
    if (line.starts_with("Communicators...")) {
      if (seen_table_) fail("a second 'Communicators...' table: one snapshot per file");
      seen_table_ = true;
      section_ = Section::table;
      return;
    }
    if (section_ == Section::preamble) {
      ++out_.skipped_lines;  // the job summary
      return;
    }
    // NCCL prints host names as inet_ntop writes them: the report is ASCII, and what it names
    // goes into reports and JSON as it is.
    for (const char c : line) {
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
        fail("a byte outside printable ASCII ({}): RAS prints none", quote_input(std::string_view(&c, 1)));
      }
    }
    if (line == "Errors" || line == "Warnings") {
      close_split();
      section_ = line == "Errors" ? Section::errors : Section::warnings;
      block_ = Block::none;
      in_rows_ = false;
      return;
    }
    if (line.find_first_not_of('=') == std::string_view::npos) return;  // an underline
    if (section_ == Section::table) return read_table(line);
    if (!line.starts_with("  ")) return read_block_header(line);
    read_block_line(line.substr(2));
  }

  void read_table(std::string_view line) {
    if (line.starts_with("Group ") || line.starts_with("    #  in group")) {
      in_rows_ = true;
      return;
    }
    if (line == "No communicator data collected!") return;
    if (!in_rows_) fail("expected the communicator table, got {}", quote_input(line));
    const std::vector<std::string_view> words = split_words(line);
    if (words.size() != 8) fail("a table row has 8 columns, this one {}", words.size());
    const auto group = parse_whole<int>(words[0]);
    const auto comms = parse_whole<int>(words[1]);
    const auto per_comm = parse_whole<int>(words[4]);
    if (!group || !comms || !per_comm || *comms < 1 || *per_comm < 1 || *comms > kMaxRank ||
        *per_comm > kMaxRank) {
      fail("a table row needs numbers (1 or more) for its comms and ranks per comm: {}", quote_input(line));
    }
    if (*group != static_cast<int>(rows_.size())) fail("table row of group {} where group {} was due", *group, rows_.size());
    const TableRow row{*comms, *per_comm, words[7] == "OK"};
    rows_.push_back(row);
    if (row.ok) {
      if (out_.unnamed_in_step > kMaxRank - row.comms) fail("more than {} communicators", kMaxRank);
      out_.unnamed_in_step += row.comms;
    }
  }

  /// A collective whose counts differ lists two counts or more.
  void close_split() {
    if (split_ != nullptr && split_->groups.size() < 2) {
      throw TraceError(fmt::format("{}:{}: the {} counts of {} list {} count{}: RAS lists two or "
                                   "more where they differ", out_.file, split_line_,
                                   ras_collective_nccl_name(split_->kind), comm_->label,
                                   split_->groups.size(), split_->groups.size() == 1 ? "" : "s"));
    }
    split_ = nullptr;
  }

  void read_block_header(std::string_view line) {
    close_split();
    group_ = nullptr;
    status_group_ = nullptr;
    in_status_ = false;
    error_kind_.clear();
    if (section_ == Section::errors && line == "INCOMPLETE") {
      block_ = Block::job_incomplete;
      return;
    }
    if (section_ == Section::errors && line == "DEAD") {
      block_ = Block::job_dead;
      return;
    }
    if (section_ == Section::warnings && line == "TIMEOUT") {
      block_ = Block::timeout;
      return;
    }
    if (!line.starts_with('#')) fail("unexpected line in the {} section: {}", section_name(), quote_input(line));
    // "#%d-%d (%016lx) KIND"
    std::string_view rest = line.substr(1);
    const int group = number<int>(rest, "the communicator group");
    expect(rest, "-");
    const int index = number<int>(rest, "the communicator index");
    expect(rest, " (");
    const std::size_t close = rest.find(") ");
    if (close == std::string_view::npos || close == 0 || close > 16 ||
        rest.substr(0, close).find_first_not_of("0123456789abcdef") != std::string_view::npos) {
      fail("expected the communicator hash (16 hex digits) in parentheses: {}", quote_input(line));
    }
    const std::string hash(rest.substr(0, close));
    rest.remove_prefix(close + 2);
    if (section_ == Section::errors && rest == "INCOMPLETE") block_ = Block::comm_incomplete;
    else if (section_ == Section::errors && rest == "ERROR") block_ = Block::comm_error;
    else if (section_ == Section::warnings && rest == "MISMATCH") block_ = Block::comm_mismatch;
    else fail("unknown {} kind {}", section_name(), quote_input(rest));
    comm_ = &communicator(fmt::format("#{}-{}", group, index), hash, group);
  }

  RasCommunicator& communicator(const std::string& label, const std::string& hash, int group) {
    for (RasCommunicator& comm : out_.communicators) {
      if (comm.label != label) continue;
      if (comm.hash != hash) fail("{} has hash {} here and {} above", label, hash, comm.hash);
      return comm;
    }
    if (group >= static_cast<int>(rows_.size())) fail("{}: the table has no group {}", label, group);
    RasCommunicator& comm = out_.communicators.emplace_back();
    comm.label = label;
    comm.hash = hash;
    comm.size = rows_[static_cast<std::size_t>(group)].ranks_per_comm;
    comm.line = line_;
    return comm;
  }

  void read_block_line(std::string_view line) {
    switch (block_) {
      case Block::none: fail("an indented line outside any section entry: {}", quote_input(line));
      case Block::job_incomplete:
      case Block::job_dead: return read_process_line(line);
      case Block::timeout: return read_timeout(line);
      case Block::comm_incomplete: return read_missing_rank(line);
      case Block::comm_error: return read_error_line(line);
      case Block::comm_mismatch: return read_mismatch_line(line);
    }
  }

  void read_process_line(std::string_view line) {
    if (line.starts_with("Missing communicator data from ") || line.find(" considered dead") != std::string_view::npos ||
        line.starts_with("[could not find information")) {
      return;  // the count; the processes follow
    }
    // "Process %d on node %s managing GPU%s %s"
    std::string_view rest = line;
    expect(rest, "Process ");
    RasProcess process;
    process.pid = number<int>(rest, "the process id");
    expect(rest, " on node ");
    const std::size_t managing = rest.find(" managing GPU");
    if (managing == std::string_view::npos || managing == 0) fail("expected 'managing GPU' after the node: {}", quote_input(line));
    process.host = std::string(rest.substr(0, managing));
    rest.remove_prefix(managing + 13);
    eat(rest, "s");
    expect(rest, " ");
    process.gpus = std::string(rest);
    process.dead = block_ == Block::job_dead;
    out_.processes_missing.push_back(std::move(process));
  }

  void read_timeout(std::string_view line) {
    std::string_view rest = line;
    expect(rest, "Encountered ");
    out_.timeouts = number<int>(rest, "the timeout count");
  }

  void read_missing_rank(std::string_view line) {
    std::string_view rest = line;
    if (eat(rest, "Missing communicator data from ")) {
      const int count = number<int>(rest, "the missing rank count");
      if (count > comm_->size - comm_->missing_count) {
        fail("{} ranks missing from {}, a communicator of {}", comm_->missing_count + count, comm_->label, comm_->size);
      }
      comm_->missing_count += count;
      return;
    }
    expect(rest, "Rank ");
    RasMissingRank missing;
    missing.rank = rank_number(rest);
    expect(rest, " -- ");
    read_process_tail(rest, missing);
    for (const RasProcess& process : out_.processes_missing) {
      if (process.pid == missing.pid && process.host == missing.host && process.dead) missing.dead = true;
    }
    for (const RasMissingRank& other : comm_->missing) {
      if (other.rank == missing.rank) fail("rank {} named twice", missing.rank);
    }
    if (static_cast<int>(comm_->missing.size()) >= comm_->missing_count) {
      fail("more missing ranks named than 'Missing communicator data from {}' counts", comm_->missing_count);
    }
    comm_->missing.push_back(std::move(missing));
  }

  void read_error_line(std::string_view line) {
    std::string_view rest = line;
    if (eat(rest, "Initialization error")) {
      error_kind_ = "initialization error";
      return;
    }
    if (eat(rest, "Asynchronous error")) {
      error_kind_ = "asynchronous error";
      return;
    }
    if (error_kind_.empty()) fail("an error line before 'Initialization error' or 'Asynchronous error': {}", quote_input(line));
    read_note_line(line, " ranks reported ", " reported ", error_kind_ + ": ");
  }

  void read_mismatch_line(std::string_view line) {
    std::string_view rest = line;
    if (line == "Communicator ranks have different status") {
      close_split();
      status_group_ = nullptr;
      in_status_ = true;
      return;
    }
    if (eat(rest, "Communicator ranks have different ")) {
      const std::size_t space = rest.find(' ');
      const std::string_view kind = rest.substr(0, space);
      if (rest.substr(space == std::string_view::npos ? rest.size() : space) != " operation counts") {
        fail("expected 'operation counts' after the collective: {}", quote_input(line));
      }
      std::size_t k = 0;
      while (k < kRasCollectives && ras_collective_nccl_name(k) != kind) ++k;
      if (k == kRasCollectives) fail("unknown collective {}", quote_input(kind));
      for (const RasCountSplit& split : comm_->splits) {
        if (split.kind == k) fail("the {} counts of {} twice", kind, comm_->label);
      }
      close_split();
      split_line_ = line_;
      comm_->splits.push_back({k, {}});
      split_ = &comm_->splits.back();
      group_ = nullptr;
      in_status_ = false;
      return;
    }
    if (in_status_) return read_note_line(line, " ranks have status ", " has status ", "status ");
    if (split_ == nullptr) fail("a count line before 'Communicator ranks have different ...': {}", quote_input(line));
    // "%d ranks have launched up to operation %ld" / "%d ranks have not launched any operations"
    if (!rest.empty() && rest.front() >= '0' && rest.front() <= '9') {
      const int count = number<int>(rest, "the rank count");
      expect(rest, " ranks have ");
      group_ = &count_group(launched(rest, line), count);
      return;
    }
    expect(rest, "Rank ");
    const int rank = rank_number(rest);
    if (eat(rest, " has ")) {
      const std::size_t dash = rest.find(" -- ");
      if (dash == std::string_view::npos) fail("expected ' -- ' after the count: {}", quote_input(line));
      RasCountGroup& group = count_group(launched(rest.substr(0, dash), line), 1);
      add_rank(group.ranks, rank);
      group_ = nullptr;
      add_process(rank, rest.substr(dash + 4));
      return;
    }
    if (group_ == nullptr) fail("a rank line before its count line: {}", quote_input(line));
    expect(rest, " -- ");
    add_rank(group_->ranks, rank);
    if (static_cast<int>(group_->ranks.ranks.size()) > group_->ranks.count) fail("more ranks named than counted");
    add_process(rank, rest);
  }

  /// A named rank's "GPU G managed by process P on node H", kept once per rank.
  void add_process(int rank, std::string_view tail) {
    RasRankProcess process;
    process.rank = rank;
    read_process_tail(tail, process);
    if (process.pid < 0) return;
    std::vector<RasRankProcess>& known = comm_->processes;
    const auto at = std::lower_bound(known.begin(), known.end(), rank,
                                     [](const RasRankProcess& p, int r) { return p.rank < r; });
    if (at == known.end() || at->rank != rank) known.insert(at, std::move(process));
  }

  /// "launched up to operation K" (K) or "not launched any operations" (0).
  static std::uint64_t launched(std::string_view text, std::string_view line) {
    if (text == "not launched any operations") return 0;
    if (!eat(text, "launched up to operation ")) fail("expected 'launched up to operation K': {}", quote_input(line));
    const auto value = parse_whole<std::uint64_t>(text);
    if (!value) fail("the operation count is not a number: {}", quote_input(text));
    return *value;
  }

  RasCountGroup& count_group(std::uint64_t launched, int count) {
    int ranks = count;
    for (const RasCountGroup& group : split_->groups) {
      if (group.launched == launched) fail("count {} listed twice", launched);
      ranks += group.ranks.count;
    }
    if (ranks > comm_->size) fail("{} ranks counted in {}, a communicator of {}", ranks, comm_->label, comm_->size);
    split_->groups.push_back({launched, {count, {}}});
    std::stable_sort(split_->groups.begin(), split_->groups.end(),
                     [](const RasCountGroup& a, const RasCountGroup& b) { return a.launched > b.launched; });
    for (RasCountGroup& group : split_->groups) {
      if (group.launched == launched) return group;
    }
    return split_->groups.back();  // unreachable
  }

  /// "N ranks PLURAL VALUE" (its ranks may follow as "Rank R -- ..."), or "Rank R SINGULAR
  /// VALUE -- ...": the note "PREFIX VALUE" of those ranks.
  void read_note_line(std::string_view line, std::string_view plural, std::string_view singular,
                      const std::string& prefix) {
    std::string_view rest = line;
    if (!rest.empty() && rest.front() >= '0' && rest.front() <= '9') {
      const int count = number<int>(rest, "the rank count");
      expect(rest, plural);
      status_group_ = &note(prefix + std::string(rest), count);
      return;
    }
    expect(rest, "Rank ");
    const int rank = rank_number(rest);
    if (eat(rest, singular)) {
      const std::size_t dash = rest.find(" -- ");
      if (dash == std::string_view::npos) fail("expected ' -- ' after {}: {}", quote_input(singular), quote_input(line));
      add_rank(note(prefix + std::string(rest.substr(0, dash)), 1).ranks, rank);
      status_group_ = nullptr;
      return;
    }
    // "Rank R -- ...": a member of the last "N ranks" line.
    if (status_group_ == nullptr) fail("a rank line before its count line");
    expect(rest, " -- ");
    add_rank(status_group_->ranks, rank);
  }

  RasRankNote& note(std::string what, int count) {
    if (count > comm_->size) fail("{} ranks in {}, a communicator of {}", count, comm_->label, comm_->size);
    for (RasRankNote& existing : comm_->notes) {
      if (existing.what == what) {
        if (existing.ranks.count + count > comm_->size) fail("more ranks than {} has", comm_->label);
        existing.ranks.count += count;
        return existing;
      }
    }
    comm_->notes.push_back({std::move(what), {count, {}}});
    return comm_->notes.back();
  }

  /// A count group RAS did not name is the communicator's ranks that no other group, missing
  /// rank or status holds, where exactly that many are left.
  static void name_the_rest(RasCommunicator& comm) {
    if (comm.size <= 0 || comm.missing_count != static_cast<int>(comm.missing.size())) return;
    for (const RasRankNote& note : comm.notes) {
      if (note.what == "status NOCOMM") return;  // ranks outside the counts, maybe unnamed
    }
    for (RasCountSplit& split : comm.splits) {
      RasCountGroup* unnamed = nullptr;
      std::vector<bool> taken(static_cast<std::size_t>(comm.size), false);
      bool fits = true;
      for (RasCountGroup& group : split.groups) {
        if (static_cast<int>(group.ranks.ranks.size()) == group.ranks.count) {
          for (int r : group.ranks.ranks) {
            if (r >= comm.size) fits = false;
            else taken[static_cast<std::size_t>(r)] = true;
          }
        } else if (unnamed == nullptr && group.ranks.ranks.empty()) {
          unnamed = &group;
        } else {
          fits = false;
        }
      }
      for (const RasMissingRank& missing : comm.missing) {
        if (missing.rank >= comm.size) fits = false;
        else taken[static_cast<std::size_t>(missing.rank)] = true;
      }
      if (!fits || unnamed == nullptr) continue;
      std::vector<int> rest;
      for (int r = 0; r < comm.size; ++r) {
        if (!taken[static_cast<std::size_t>(r)]) rest.push_back(r);
      }
      if (static_cast<int>(rest.size()) == unnamed->ranks.count) unnamed->ranks.ranks = std::move(rest);
    }
  }

  std::string_view section_name() const {
    return section_ == Section::errors ? "Errors" : section_ == Section::warnings ? "Warnings" : "table";
  }

  std::string_view text_;
  RasSnapshot out_;
  int line_ = 0;
  bool seen_table_ = false;
  bool in_rows_ = false;
  Section section_ = Section::preamble;
  Block block_ = Block::none;
  std::vector<TableRow> rows_;
  RasCommunicator* comm_ = nullptr;
  RasCountSplit* split_ = nullptr;
  int split_line_ = 0;
  RasCountGroup* group_ = nullptr;
  RasRankNote* status_group_ = nullptr;
  bool in_status_ = false;
  std::string error_kind_;
};

}  // namespace

RasSnapshot parse_text(std::string_view name, std::string_view text) {
  return TextReader(name, text).read();
}

}  // namespace ranklab::detail::ras
