// The SimGrid TI importer (format in simgrid_ti.hpp): files -> lines -> actions, each
// action re-issued into a TraceBuilder; then messages are matched and what never completed
// is told apart from what is malformed.
#include "traces/simgrid_ti.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "traces/error.hpp"
#include "traces/input_file.hpp"
#include "traces/quote_input.hpp"
#include "traces/trace_builder.hpp"

namespace ranklab {
namespace {

constexpr int kAnySourceSmpi = -333;  // what SMPI 3.32 records for MPI_ANY_SOURCE
constexpr int kAnySourceMpi = -555;   // MPI_ANY_SOURCE itself (older recordings)
constexpr int kAnyTagSmpi = -444;     // MPI_ANY_TAG

struct TiFile {
  std::string name;
  std::string text;
};

struct Location {
  std::uint32_t file = 0;
  std::uint32_t line = 0;
};

/// The whitespace-separated words of a line.
std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    const std::size_t start = i;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i > start) words.push_back(line.substr(start, i - start));
  }
  return words;
}

/// Calls visit(line_number, words) for every non-blank line of `text`.
template <typename Visit>
void for_each_line(std::string_view text, Visit visit) {
  std::uint32_t number = 0;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++number;
    const auto words = split(line);
    if (!words.empty()) visit(number, words);
  }
}

std::optional<std::int64_t> parse_integer(std::string_view text) {
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end) return std::nullopt;
  return value;
}

/// An element type of SMPI's table (smpi_datatype.cpp): ranklab's type and how many of its
/// elements one SMPI element is.
struct ElementType {
  DataType dtype = DataType::u8;
  std::uint64_t per_element = 1;
};

ElementType smpi_type(std::int64_t id) {
  using D = DataType;
  switch (id) {
    case 0:
    case 40:
      return {D::f64, 1};  // double, real8
    case 1:
    case 11:
    case 19:
    case 23:
    case 45:
    case 47:
      return {D::i32, 1};
    case 2:
    case 6:
    case 8:
    case 9:
    case 16:
    case 17:
    case 21:
    case 51:
    case 57:
      return {D::u8, 1};
    case 3:
    case 10:
    case 18:
    case 22:
    case 46:
      return {D::u8, 2};  // 16-bit integers
    case 4:
    case 7:
    case 12:
    case 13:
    case 20:
    case 24:
    case 28:
    case 29:
    case 48:
    case 59:
      return {D::i64, 1};
    case 5:
    case 38:
    case 39:
      return {D::f32, 1};  // float, real, real4
    case 15:
      return {D::i32, 1};  // wchar_t
    case 25:
    case 35:
    case 42:
    case 52:
      return {D::f32, 2};  // pairs of floats
    case 26:
    case 36:
    case 43:
    case 44:
    case 53:
      return {D::f64, 2};
    case 34:
      return {D::i32, 2};
    case 37:
      return {D::i64, 2};
    case 30:
    case 33:
      return {D::u8, 8};  // float_int, short_int
    case 14:
    case 31:
    case 32:
    case 41:
    case 49:
      return {D::u8, 16};
    case 27:
    case 50:
    case 54:
      return {D::u8, 32};
    case 58:
      return {D::u8, 8};  // pointers
    default:
      return {D::u8, 1};  // derived types: bytes
  }
}

/// SMPI records point-to-point counts in bytes for the types it cannot replay.
bool replayable_p2p_type(std::int64_t id) { return id >= 0 && id <= 6; }

class Importer {
 public:
  explicit Importer(std::vector<TiFile> files) : files_(std::move(files)) {}

  Trace run() {
    const int world = world_size();
    TraceBuilder builder(world);
    ranks_.resize(static_cast<std::size_t>(world));
    builder_ = &builder;
    for (std::uint32_t f = 0; f < files_.size(); ++f) {
      for_each_line(files_[f].text, [&](std::uint32_t line, const auto& words) {
        where_ = {f, line};
        action(words);
      });
    }
    json_config_ = {{"program", "simgrid-ti"}, {"source", files_.front().name}};
    BuiltTrace built = builder.build(json_config_);
    settle(built);
    locate(built.trace);
    return std::move(built.trace);
  }

 private:
  struct OpenRequest {
    std::uint64_t seq = 0;
    int src = 0;
    int dst = 0;
    int tag = 0;
    bool any_source = false;
  };
  struct RankState {
    std::vector<OpenRequest> open;
    std::vector<Location> where;           ///< by rank_seq: the line that posted it
    std::vector<std::uint64_t> closed_at;  ///< by rank_seq: the action that waited (0: never)
    std::uint64_t actions = 0;             ///< actions so far (numbered from 1)
    std::int64_t default_type = 6;         ///< MPI_BYTE unless `init` says MPI_DOUBLE
  };

  [[noreturn]] void fail_at(Location at, const std::string& reason) const {
    throw TraceError(fmt::format("{}:{}: {}", files_[at.file].name, at.line, reason));
  }
  [[noreturn]] void fail(const std::string& reason) const { fail_at(where_, reason); }

  /// The world: one more than the largest rank any line starts with.
  int world_size() {
    int largest = -1;
    for (std::uint32_t f = 0; f < files_.size(); ++f) {
      for_each_line(files_[f].text, [&](std::uint32_t line, const auto& words) {
        where_ = {f, line};
        const auto rank = parse_integer(words[0]);
        if (!rank || *rank < 0 || *rank >= kMaxTiRanks) {
          fail(fmt::format("expected 'RANK ACTION ...' with RANK in [0, {}), got {}", kMaxTiRanks,
                           quote_input(words[0])));
        }
        if (words.size() < 2) fail(fmt::format("rank {}: no action", *rank));
        largest = std::max(largest, static_cast<int>(*rank));
      });
    }
    if (largest < 0) {
      throw TraceError(fmt::format("{}: no actions (not a SimGrid time-independent trace)",
                                   files_.front().name));
    }
    return largest + 1;
  }

  // ---- arguments ------------------------------------------------------------------------

  std::int64_t integer(std::string_view word, std::string_view what) const {
    const auto value = parse_integer(word);
    if (!value) fail(fmt::format("{} must be an integer, got {}", what, quote_input(word)));
    return *value;
  }
  std::uint64_t count(std::string_view word, std::string_view what) const {
    const std::int64_t value = integer(word, what);
    if (value < 0 || static_cast<std::uint64_t>(value) > kMaxTraceCount) {
      fail(fmt::format("{} {} out of range [0, 2^48]", what, value));
    }
    return static_cast<std::uint64_t>(value);
  }
  double amount(std::string_view word, std::string_view what) const {
    double value = 0;
    const char* end = word.data() + word.size();
    const auto [stop, error] = std::from_chars(word.data(), end, value);
    if (error != std::errc() || stop != end || !std::isfinite(value) || value < 0) {
      fail(fmt::format("{} must be a number >= 0, got {}", what, quote_input(word)));
    }
    return value;
  }
  /// `n` elements of SMPI type `type` as elements of ranklab's type, within a trace's limit
  /// (an SMPI element may be several of ranklab's: 2^48 long doubles are 2^52 bytes).
  std::uint64_t in_elements(std::uint64_t n, std::int64_t type, const ElementType& element) const {
    const std::uint64_t elements = n * element.per_element;  // <= 2^48 * 32: no overflow
    if (elements > kMaxTraceCount) {
      fail(fmt::format("count {} of SMPI datatype {} is {} x {}, over the limit of 2^48 elements", n,
                       type, elements, to_string(element.dtype)));
    }
    return elements;
  }
  int rank_arg(std::string_view word, std::string_view what) const {
    const std::int64_t value = integer(word, what);
    if (value < 0 || value >= builder_->world_size()) {
      fail(fmt::format("{} {} is outside the world of {} ranks", what, value,
                       builder_->world_size()));
    }
    return static_cast<int>(value);
  }
  std::int64_t type_arg(const std::vector<std::string_view>& w, std::size_t i, int rank) const {
    if (i >= w.size()) return ranks_[static_cast<std::size_t>(rank)].default_type;
    const std::int64_t id = integer(w[i], "datatype");
    if (id < 0) fail(fmt::format("datatype {} is not an index of SMPI's table", id));
    return id;
  }
  void need(const std::vector<std::string_view>& w, std::size_t args,
            std::string_view usage) const {
    if (w.size() < 2 + args) {
      fail(fmt::format("{} needs {} (got {} argument{})", w[1], usage, w.size() - 2,
                       w.size() == 3 ? "" : "s"));
    }
  }

  // ---- actions --------------------------------------------------------------------------

  void posted(int rank, std::uint64_t seq) {
    RankState& state = ranks_[static_cast<std::size_t>(rank)];
    state.where.resize(seq + 1);
    state.where[seq] = where_;
    state.closed_at.resize(seq + 1, 0);
  }
  void closed(int rank, std::uint64_t seq) {
    RankState& state = ranks_[static_cast<std::size_t>(rank)];
    builder_->wait(rank, seq);
    state.closed_at[seq] = state.actions;
  }

  void point_to_point(int rank, const std::vector<std::string_view>& w, bool send, bool blocking) {
    need(w, 3, send ? "DST TAG COUNT [DTYPE]" : "SRC TAG COUNT [DTYPE]");
    const std::int64_t peer_word = integer(w[2], send ? "destination" : "source");
    const bool any_source = !send && (peer_word == kAnySourceSmpi || peer_word == kAnySourceMpi);
    const int peer = any_source ? kNoRank : rank_arg(w[2], send ? "destination" : "source");
    std::int64_t tag = integer(w[3], "tag");
    if (!send && tag == kAnyTagSmpi) tag = kAnyTagInTrace;
    if ((tag < 0 && !(tag == kAnyTagInTrace && !send)) || tag > INT32_MAX) {
      fail(fmt::format("tag {} out of range", excerpt(w[3])));
    }
    // A receive's count may be 0 or negative: SMPI then probes for the size.
    const std::int64_t raw = integer(w[4], "count");
    const std::uint64_t n = !send && raw < 0 ? 0 : count(w[4], "count");
    const std::int64_t type = type_arg(w, 5, rank);
    const ElementType element =
        replayable_p2p_type(type) ? smpi_type(type) : ElementType{DataType::u8, 1};
    const std::uint64_t elements = in_elements(n, type, element);
    const std::uint64_t seq =
        send ? builder_->isend(rank, peer, element.dtype, elements, static_cast<int>(tag))
             : builder_->irecv(rank, peer, element.dtype, elements, static_cast<int>(tag));
    posted(rank, seq);
    if (blocking) {
      closed(rank, seq);
      return;
    }
    ranks_[static_cast<std::size_t>(rank)].open.push_back(
        {seq, send ? rank : peer, send ? peer : rank, static_cast<int>(tag), any_source});
  }

  void wait(int rank, const std::vector<std::string_view>& w) {
    need(w, 3, "SRC DST TAG");
    const std::int64_t src = integer(w[2], "source"), dst = integer(w[3], "destination");
    const std::int64_t tag = integer(w[4], "tag");
    auto& open = ranks_[static_cast<std::size_t>(rank)].open;
    const auto it = std::find_if(open.begin(), open.end(), [&](const OpenRequest& r) {
      return (r.src == src || r.any_source) && r.dst == dst &&
             (r.tag == tag || r.tag == kAnyTagInTrace);
    });
    // As SMPI's replay: no such request means a test() already completed it.
    if (it == open.end()) return;
    closed(rank, it->seq);
    open.erase(it);
  }

  void wait_all(int rank) {
    auto& open = ranks_[static_cast<std::size_t>(rank)].open;
    for (const OpenRequest& r : open) closed(rank, r.seq);
    open.clear();
  }

  void collective(int rank, OpKind op, std::uint64_t n, std::int64_t type, int root = kNoRank) {
    const ElementType element = smpi_type(type);
    const std::uint64_t seq =
        builder_->icollective(rank, op, element.dtype, in_elements(n, type, element), 0, root);
    posted(rank, seq);
    closed(rank, seq);
  }

  /// `w[first .. first + p)`: a count per rank, all equal (the fabric's collectives take one).
  std::uint64_t equal_counts(const std::vector<std::string_view>& w, std::size_t first) const {
    const auto p = static_cast<std::size_t>(builder_->world_size());
    if (w.size() < first + p) {
      fail(fmt::format("{} needs a count per rank ({}), got {} arguments", w[1], p, w.size() - 2));
    }
    const std::uint64_t n = count(w[first], "count");
    for (std::size_t i = first + 1; i < first + p; ++i) {
      if (count(w[i], "count") != n) {
        fail(
            fmt::format("{} with unequal counts is not supported (ranklab's collectives take one "
                        "count per rank)",
                        w[1]));
      }
    }
    return n;
  }

  void action(const std::vector<std::string_view>& w) {
    const int rank = static_cast<int>(*parse_integer(w[0]));
    RankState& state = ranks_[static_cast<std::size_t>(rank)];
    ++state.actions;
    std::string name(w[1]);
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    const auto p = static_cast<std::size_t>(builder_->world_size());
    if (name == "init") {
      state.default_type = w.size() > 2 ? 0 : 6;  // SMPI: MPI_DOUBLE with an argument
    } else if (name == "finalize" || name == "comm_size" || name == "comm_split" ||
               name == "comm_dup" || name == "location" || name == "test") {
      // Nothing to re-issue (SMPI's replay does nothing for them either).
    } else if (name == "compute") {
      need(w, 1, "FLOPS");
      builder_->compute(rank, {.flops = amount(w[2], "FLOPs")});
    } else if (name == "sleep") {
      need(w, 1, "SECONDS");
      builder_->compute(rank, {.seconds = amount(w[2], "seconds")});
    } else if (name == "send" || name == "ssend" || name == "bsend" || name == "rsend") {
      point_to_point(rank, w, true, true);
    } else if (name == "isend" || name == "issend" || name == "ibsend" || name == "irsend") {
      point_to_point(rank, w, true, false);
    } else if (name == "recv") {
      point_to_point(rank, w, false, true);
    } else if (name == "irecv") {
      point_to_point(rank, w, false, false);
    } else if (name == "wait") {
      wait(rank, w);
    } else if (name == "waitall") {
      wait_all(rank);
    } else if (name == "sendrecv") {
      sendrecv(rank, w);
    } else if (name == "barrier") {
      collective(rank, OpKind::barrier, 0, 6);
    } else if (name == "bcast") {
      need(w, 1, "COUNT [ROOT [DTYPE]]");
      const int root = w.size() > 3 ? rank_arg(w[3], "root") : 0;
      collective(rank, OpKind::broadcast, count(w[2], "count"), type_arg(w, 4, rank), root);
    } else if (name == "reduce") {
      need(w, 2, "COUNT COMP [ROOT [DTYPE]]");
      const int root = w.size() > 4 ? rank_arg(w[4], "root") : 0;
      collective(rank, OpKind::reduce, count(w[2], "count"), type_arg(w, 5, rank), root);
      builder_->compute(rank, {.flops = amount(w[3], "COMP")});
    } else if (name == "allreduce") {
      need(w, 2, "COUNT COMP [DTYPE]");
      collective(rank, OpKind::all_reduce, count(w[2], "count"), type_arg(w, 4, rank));
      builder_->compute(rank, {.flops = amount(w[3], "COMP")});
    } else if (name == "alltoall" || name == "allgather") {
      need(w, 2, "SENDCOUNT RECVCOUNT [DT1 [DT2]]");
      collective(rank, name == "alltoall" ? OpKind::all_to_all : OpKind::all_gather,
                 count(w[2], "count"), type_arg(w, 4, rank));
    } else if (name == "gather" || name == "scatter") {
      need(w, 2, "SENDCOUNT RECVCOUNT [ROOT [DT1 [DT2]]]");
      const int root = w.size() > 4 ? rank_arg(w[4], "root") : 0;
      if (name == "gather") {
        collective(rank, OpKind::gather, count(w[2], "count"), type_arg(w, 5, rank), root);
      } else {
        collective(rank, OpKind::scatter, count(w[3], "count"), type_arg(w, 6, rank), root);
      }
    } else if (name == "reducescatter") {
      const std::uint64_t n = equal_counts(w, 2);
      need(w, p + 1, "RECVCOUNT per rank, COMP [DTYPE]");
      collective(rank, OpKind::reduce_scatter, n, type_arg(w, 3 + p, rank));
      builder_->compute(rank, {.flops = amount(w[2 + p], "COMP")});
    } else if (name == "gatherv" || name == "allgatherv") {
      need(w, 1, "SENDCOUNT RECVCOUNTS...");
      const std::uint64_t n = count(w[2], "count");
      if (equal_counts(w, 3) != n) fail(fmt::format("{}: send and receive counts differ", w[1]));
      if (name == "gatherv") {
        const int root = w.size() > 3 + p ? rank_arg(w[3 + p], "root") : 0;
        collective(rank, OpKind::gather, n, type_arg(w, 4 + p, rank), root);
      } else {
        collective(rank, OpKind::all_gather, n, type_arg(w, 3 + p, rank));
      }
    } else if (name == "scatterv") {
      const std::uint64_t n = equal_counts(w, 2);
      need(w, p + 1, "SENDCOUNTS... RECVCOUNT [ROOT [DT1 [DT2]]]");
      const int root = w.size() > 3 + p ? rank_arg(w[3 + p], "root") : 0;
      collective(rank, OpKind::scatter, n, type_arg(w, 5 + p, rank), root);
    } else if (name == "alltoallv") {
      need(w, 2 * p + 2, "SENDSIZE SENDCOUNTS... RECVSIZE RECVCOUNTS... [DT1 [DT2]]");
      const std::uint64_t n = equal_counts(w, 3);
      if (equal_counts(w, 4 + p) != n) fail("alltoallv: send and receive counts differ");
      collective(rank, OpKind::all_to_all, n, type_arg(w, 4 + 2 * p, rank));
    } else {
      fail(fmt::format("unknown or unsupported action {}", quote_input(w[1])));
    }
  }

  void sendrecv(int rank, const std::vector<std::string_view>& w) {
    need(w, 4, "SENDCOUNT DST RECVCOUNT SRC [DT1 [DT2]]");
    const int dst = rank_arg(w[3], "destination");
    const std::int64_t src_word = integer(w[5], "source");
    const bool any = src_word == kAnySourceSmpi || src_word == kAnySourceMpi;
    const int src = any ? kNoRank : rank_arg(w[5], "source");
    const std::int64_t out_type = type_arg(w, 6, rank);
    const std::int64_t in_type = type_arg(w, 7, rank);
    const ElementType out = smpi_type(out_type);
    const ElementType in = smpi_type(in_type);
    const std::uint64_t send = builder_->isend(
        rank, dst, out.dtype, in_elements(count(w[2], "count"), out_type, out), 0);
    posted(rank, send);
    const std::uint64_t recv = builder_->irecv(
        rank, src, in.dtype, in_elements(count(w[4], "count"), in_type, in), 0);
    posted(rank, recv);
    closed(rank, send);
    closed(rank, recv);
  }

  // ---- after matching -------------------------------------------------------------------

  /// An operation that never completed is fine if its rank's recording ended with it open
  /// or waiting for it (a deadlock stopped SMPI); it becomes pending. Otherwise the rank went
  /// on past an operation that could not have completed: the trace is malformed.
  void settle_one(BuiltTrace& built, EventRef ref, const std::string& what) {
    TraceEvent& e = built.trace.ranks[static_cast<std::size_t>(ref.rank)][ref.index];
    const RankState& state = ranks_[static_cast<std::size_t>(ref.rank)];
    const std::uint64_t closed_at = state.closed_at[e.rank_seq];
    if (closed_at != 0 && closed_at != state.actions) {
      fail_at(state.where[e.rank_seq], what + fmt::format(", yet rank {} went on past it", e.rank));
    }
    e.status = OpStatus::pending;
    e.blocked = closed_at != 0;
    if (e.op == OpKind::recv) e.msg = {};
  }

  void settle(BuiltTrace& built) {
    const Trace& trace = built.trace;
    for (const EventRef& ref : built.unmatched) {
      const TraceEvent& e = trace.ranks[static_cast<std::size_t>(ref.rank)][ref.index];
      settle_one(
          built, ref,
          e.op == OpKind::send
              ? fmt::format("rank {} sends {} x {} to rank {} tag {} and no receive matches it",
                            e.rank, e.count, to_string(e.dtype), e.peer, e.tag)
              : fmt::format(
                    "rank {} receives from {} tag {} and no send matches it", e.rank,
                    e.peer == kNoRank ? std::string("any source") : fmt::format("rank {}", e.peer),
                    e.tag == kAnyTagInTrace ? std::string("any") : std::to_string(e.tag)));
    }
    // Collectives: every member of the world must reach the k-th one.
    std::vector<std::size_t> members;
    for (const auto& events : trace.ranks) {
      for (const TraceEvent& e : events) {
        if (is_point_to_point(e.op)) continue;
        const auto k = static_cast<std::size_t>(e.coll_seq);
        if (members.size() <= k) members.resize(k + 1, 0);
        ++members[k];
      }
    }
    const auto world = static_cast<std::size_t>(trace.header.world_size);
    for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
      for (std::size_t i = 0; i < trace.ranks[r].size(); ++i) {
        const TraceEvent& e = trace.ranks[r][i];
        if (is_point_to_point(e.op)) continue;
        const std::size_t joined = members[static_cast<std::size_t>(e.coll_seq)];
        if (joined == world) continue;
        settle_one(built, {static_cast<int>(r), i},
                   fmt::format("{} #{} of the world is reached by {} of {} ranks", to_string(e.op),
                               e.coll_seq, joined, world));
      }
    }
  }

  /// Each event's file and line, for what refuses it later (replay).
  void locate(Trace& trace) const {
    for (const TiFile& file : files_) trace.sources.files.push_back(file.name);
    for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
      const std::vector<Location>& where = ranks_[r].where;
      for (TraceEvent& e : trace.ranks[r]) {
        if (e.rank_seq < where.size()) e.source = {where[e.rank_seq].file, where[e.rank_seq].line};
      }
    }
  }

  std::vector<TiFile> files_;
  std::vector<RankState> ranks_;
  TraceBuilder* builder_ = nullptr;
  Location where_;
  nlohmann::json json_config_;
};

/// A listed file's text; an error names the index line that listed it.
std::string read_listed_file(const std::filesystem::path& path, std::string_view cited_by) {
  try {
    return read_input_file(path, "listed file");
  } catch (const TraceError& error) {
    throw TraceError(fmt::format("{}: {}", cited_by, error.what()));
  }
}

/// An index lists files: its first line is not `RANK ACTION`.
bool is_index(std::string_view text) {
  bool index = false;
  bool decided = false;
  for_each_line(text, [&](std::uint32_t, const auto& words) {
    if (decided) return;
    decided = true;
    index = !parse_integer(words[0]) || words.size() < 2;
  });
  return index;
}

}  // namespace

Trace parse_simgrid_ti(std::string_view text, std::string_view name) {
  return Importer({{std::string(name), std::string(text)}}).run();
}

Trace read_simgrid_ti(const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::path index = path;
  if (std::filesystem::is_directory(path, ec)) {
    index = path / "trace.txt";
    if (!std::filesystem::exists(index, ec)) {
      throw TraceError(
          fmt::format("{}: no trace.txt in this folder (the index smpirun -trace-ti "
                      "writes)",
                      path.string()));
    }
  }
  std::string text = read_input_file(index, "SimGrid TI trace");
  if (!is_index(text)) return parse_simgrid_ti(text, index.string());
  std::vector<TiFile> files;
  for_each_line(text, [&](std::uint32_t line, const auto& words) {
    const std::filesystem::path listed = index.parent_path() / std::string(words[0]);
    files.push_back(
        {listed.string(), read_listed_file(listed, fmt::format("{}:{}", index.string(), line))});
  });
  return Importer(std::move(files)).run();
}

}  // namespace ranklab
