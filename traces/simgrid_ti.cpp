// The SimGrid TI importer (format in simgrid_ti.hpp): files -> lines -> actions, each
// action re-issued into a TraceBuilder; then messages are matched and what never completed
// is told apart from what is malformed.
#include "traces/simgrid_ti.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <iterator>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "traces/detail/simgrid_ti_vocabulary.hpp"
#include "traces/detail/words.hpp"
#include "traces/error.hpp"
#include "traces/input_file.hpp"
#include "traces/quote_input.hpp"
#include "traces/text.hpp"
#include "traces/trace_builder.hpp"

namespace ranklab {
namespace {

using detail::ElementType;
using detail::is_nonblocking_collective;
using detail::kDerivedType;
using detail::refused_action;
using detail::replayable_p2p_type;
using detail::smpi_type;

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

/// Calls visit(line_number, words) for every non-blank line of `text`.
template <typename Visit>
void for_each_line(std::string_view text, Visit visit) {
  std::uint32_t number = 0;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++number;
    const auto words = detail::split_words(line);
    if (!words.empty()) visit(number, words);
  }
}

class Importer {
 public:
  explicit Importer(std::vector<TiFile> files) : files_(std::move(files)) {}

  /// Buffered sends are never waited for, yet a wait list holding every one of them until
  /// the rank's end grows with their number squared (20,000 bsends: 3 GB). So a first pass
  /// finds whom each one reaches, and the second closes it once its receive is surely
  /// posted, so that replay's wait for it never blocks: after the first collective of the
  /// world the receive was posted before (a collective on the fabric releases its members
  /// together), or after a receive of a message its receiver sent after posting it.
  Trace run() {
    Importer first(files_);
    first.first_pass_ = true;
    Trace trace = first.import();
    if (!first.saw_buffered_) return trace;
    Importer second(files_);
    second.close_buffered_ = std::move(first.close_buffered_);
    return second.import();
  }

 private:
  Trace import() {
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
    if (!unfinished_.empty()) built.trace.header.config["unfinished_requests"] = unfinished_;
    if (first_pass_ && saw_buffered_) plan_buffered(built.trace);
    settle(built);
    keep_receive_signatures(built.trace);
    locate(built.trace);
    return std::move(built.trace);
  }

  static std::uint64_t key(int rank, std::uint64_t seq) {
    return (static_cast<std::uint64_t>(rank) << 40) | seq;  // seq < 2^40: a file holds fewer
  }

  /// For each matched buffered send B (rank s to rank q, received by q's R): the operation
  /// of s after whose completion R is surely posted, the earlier of s's first world
  /// collective at or after R's phase and after B, and s's first receive after B of a
  /// message q sent after R. Events are indexed by rank_seq here (the builder numbers them
  /// from 0 without gaps).
  void plan_buffered(const Trace& trace) {
    const std::size_t n = trace.ranks.size();
    std::vector<std::vector<std::uint64_t>> phase(n);       // by index: collectives before
    std::vector<std::vector<std::uint64_t>> collective(n);  // by coll_seq: rank_seq
    for (std::size_t r = 0; r < n; ++r) {
      for (const TraceEvent& e : trace.ranks[r]) {
        phase[r].push_back(collective[r].size());
        if (!is_point_to_point(e.op) && e.group == 0) collective[r].push_back(e.rank_seq);
      }
    }
    struct Buffered {
      int receiver = 0;
      std::uint64_t recv_index = 0;
    };
    std::vector<std::vector<std::pair<std::uint64_t, Buffered>>> sent(n);  // by rank_seq
    for (std::size_t r = 0; r < n; ++r) {
      for (std::size_t i = 0; i < trace.ranks[r].size(); ++i) {
        const TraceEvent& recv = trace.ranks[r][i];
        if (recv.op != OpKind::recv || !recv.msg.valid()) continue;
        const auto s = static_cast<std::size_t>(recv.msg.sender);
        const std::uint64_t b = recv.msg.sender_seq;
        if (!ranks_[s].buffered.contains(b)) continue;
        sent[s].push_back({b, {static_cast<int>(r), i}});
        const std::uint64_t j = std::max(phase[s][b], phase[r][i]);  // both come before it
        if (j < collective[s].size()) {
          close_buffered_[key(static_cast<int>(s), b)] = collective[s][j];
        }
      }
    }
    // The receive rule. Per sender, its receives from each rank, in order: (rank_seq, the
    // message's rank_seq at its sender).
    for (std::size_t s = 0; s < n; ++s) {
      if (sent[s].empty()) continue;
      std::map<int, std::vector<std::pair<std::uint64_t, std::uint64_t>>> from;
      for (const TraceEvent& e : trace.ranks[s]) {
        if (e.op == OpKind::recv && e.msg.valid()) {
          from[e.msg.sender].emplace_back(e.rank_seq, e.msg.sender_seq);
        }
      }
      for (const auto& [b, to] : sent[s]) {
        const auto list = from.find(to.receiver);
        if (list == from.end()) continue;
        auto it = std::upper_bound(list->second.begin(), list->second.end(),
                                   std::pair<std::uint64_t, std::uint64_t>{b, UINT64_MAX});
        while (it != list->second.end() && it->second <= to.recv_index) ++it;
        if (it == list->second.end()) continue;
        const auto [planned, fresh] =
            close_buffered_.try_emplace(key(static_cast<int>(s), b), it->first);
        if (!fresh) planned->second = std::min(planned->second, it->first);
      }
    }
  }

  /// After the rank's operation `seq` completed: wait for the buffered sends planned for it.
  void close_buffered_after(int rank, std::uint64_t seq) {
    auto& waiting = ranks_[static_cast<std::size_t>(rank)].buffered_open;
    std::erase_if(waiting, [&](const std::pair<std::uint64_t, std::uint64_t>& b) {
      if (b.first != seq) return false;
      builder_->wait(rank, b.second);
      return true;
    });
  }
  struct OpenRequest {
    std::uint64_t seq = 0;
    int src = 0;
    int dst = 0;
    int tag = 0;
    bool any_source = false;
    bool buffered = false;  ///< ibsend: complete once posted, whatever the receiver does
    std::uint64_t tests = 0;  ///< the rank's `test` actions before it was posted
    std::string call;         ///< "isend to rank 1 tag 3" for a report
  };
  /// A receive's own buffer, as the program posted it (matching records the message's).
  struct Signature {
    bool known = false;  ///< false: not a send or receive, or a receive that probed
    bool in_bytes = false;  ///< a type SMPI cannot replay (count in bytes): only bytes compare
    DataType dtype = DataType::u8;
    std::uint64_t count = 0;
  };
  struct RankState {
    std::vector<OpenRequest> open;
    std::vector<Location> where;           ///< by rank_seq: the line that posted it
    std::vector<std::uint64_t> closed_at;  ///< by rank_seq: the action that waited (0: never)
    std::vector<Signature> posted_as;      ///< by rank_seq: a receive's own type and count
    std::vector<bool> cancellable;         ///< by rank_seq: an irecv (MPI_Cancel may end it)
    std::uint64_t actions = 0;             ///< actions so far (numbered from 1)
    std::int64_t default_type = 6;         ///< MPI_BYTE unless `init` says MPI_DOUBLE
    std::uint64_t tests = 0;               ///< `test` actions so far (which request: unsaid)
    std::uint64_t wait_any_at = 0;         ///< the last waitany/waitsome action (0: none)
    std::set<std::uint64_t> buffered;      ///< first pass: rank_seq of its buffered sends
    /// Second pass: (rank_seq after which to close, rank_seq) of buffered sends still open.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> buffered_open;
    std::vector<std::uint64_t> open_collectives;  ///< nonblocking ones not yet waited for
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
        const auto rank = parse_whole<std::int64_t>(words[0]);
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
    const auto value = parse_whole<std::int64_t>(word);
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
    const std::optional<double> value = parse_whole<double>(word);
    if (!value || !std::isfinite(*value) || *value < 0) {
      fail(fmt::format("{} must be a finite number >= 0, got {}", what, quote_input(word)));
    }
    return *value;
  }
  /// `n` elements of SMPI type `type` as elements of ranklab's type, within a trace's limit
  /// (an SMPI element may be several of ranklab's: 2^48 long doubles are 2^52 bytes).
  std::uint64_t in_elements(std::uint64_t n, std::int64_t type, const ElementType& element) const {
    const std::uint64_t elements = n * element.per_element;  // <= 2^48 * 32: no overflow
    if (elements > kMaxTraceCount) {
      fail(fmt::format("count {} of SMPI datatype {} is {} x {}, over the limit of 2^48 elements",
                       n, type, elements, to_string(element.dtype)));
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
    if (id == kDerivedType) {
      // SMPI 3.32 writes the count in elements of the derived type (MPI_Type_contiguous(3,
      // MPI_INT) sent twice: `send 1 0 2 -1`) and nothing of its size.
      fail(
          "a derived datatype (SMPI writes -1): TI records its count but not its size, so the "
          "bytes it moves are unknown");
    }
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
    state.posted_as.resize(seq + 1);
    state.cancellable.resize(seq + 1, false);
  }
  void closed(int rank, std::uint64_t seq) {
    RankState& state = ranks_[static_cast<std::size_t>(rank)];
    builder_->wait(rank, seq);
    state.closed_at[seq] = state.actions;
    if (!state.buffered_open.empty()) close_buffered_after(rank, seq);
  }

  /// How a send or receive completes: `blocking` ones before the next action; `buffered`
  /// sends (bsend, ibsend) by MPI's definition at once, so nothing ever waits for them (the
  /// rank's end does, as MPI_Buffer_detach would); the others when a wait names them.
  enum class Completion { blocking, buffered, request, buffered_request };

  void point_to_point(int rank, const std::vector<std::string_view>& w, bool send,
                      Completion completion) {
    const std::int64_t peer_word = integer(w[2], send ? "destination" : "source");
    const bool any_source = !send && (peer_word == kAnySourceSmpi || peer_word == kAnySourceMpi);
    const int peer = any_source ? kNoRank : rank_arg(w[2], send ? "destination" : "source");
    const int tag = tag_arg(w[3], send);
    // A receive's count may be 0 or negative: SMPI then probes for the size.
    const std::int64_t raw = integer(w[4], "count");
    const std::uint64_t n = !send && raw < 0 ? 0 : count(w[4], "count");
    const std::int64_t type = type_arg(w, 5, rank);
    const ElementType element =
        replayable_p2p_type(type) ? smpi_type(type) : ElementType{DataType::u8, 1};
    post_p2p(rank, w[1], send, peer, tag, {raw >= 0, !replayable_p2p_type(type), element.dtype,
                                          in_elements(n, type, element)},
             completion);
  }

  /// A buffered send: closed at once in the first pass (only its match matters there), and
  /// in the second after the collective plan_buffered chose (open to the end without one).
  void buffer(int rank, std::uint64_t seq) {
    saw_buffered_ = true;
    RankState& state = ranks_[static_cast<std::size_t>(rank)];
    if (first_pass_) {
      state.buffered.insert(seq);
      builder_->wait(rank, seq);
    } else if (const auto it = close_buffered_.find(key(rank, seq)); it != close_buffered_.end()) {
      state.buffered_open.emplace_back(it->second, seq);
    }
  }

  int tag_arg(std::string_view word, bool send) const {
    std::int64_t tag = integer(word, "tag");
    if (!send && tag == kAnyTagSmpi) tag = kAnyTagInTrace;
    if ((tag < 0 && !(tag == kAnyTagInTrace && !send)) || tag > INT32_MAX) {
      fail(fmt::format("tag {} out of range", excerpt(word)));
    }
    return static_cast<int>(tag);
  }

  /// `Start ENDPOINT TAG BYTES DTYPE`: SMPI records a persistent request's destination,
  /// which for a receive is the rank itself (its source is not recorded: any source), and
  /// its size in bytes. A persistent send to the rank itself reads as a receive.
  void persistent_start(int rank, const std::vector<std::string_view>& w) {
    const int endpoint = rank_arg(w[2], "endpoint");
    const bool send = endpoint != rank;
    const int tag = tag_arg(w[3], send);
    const std::uint64_t bytes = count(w[4], "size");
    const std::int64_t type = type_arg(w, 5, rank);
    ElementType element =
        replayable_p2p_type(type) ? smpi_type(type) : ElementType{DataType::u8, 1};
    if (bytes % size_of(element.dtype) != 0) element = {DataType::u8, 1};
    post_p2p(rank, "Start", send, send ? endpoint : kNoRank, tag,
             {true, !replayable_p2p_type(type), element.dtype, bytes / size_of(element.dtype)},
             Completion::request);
  }

  /// Posts one send or receive (`peer` kNoRank: any source) with the program's own
  /// signature, and completes it as `completion` says.
  void post_p2p(int rank, std::string_view call, bool send, int peer, int tag,
                const Signature& own, Completion completion) {
    const bool any_source = peer == kNoRank;
    const std::uint64_t elements = own.count;
    const ElementType element{own.dtype, 1};
    const std::uint64_t seq =
        send ? builder_->isend(rank, peer, element.dtype, elements, static_cast<int>(tag))
             : builder_->irecv(rank, peer, element.dtype, elements, static_cast<int>(tag));
    posted(rank, seq);
    if (send || own.known) ranks_[static_cast<std::size_t>(rank)].posted_as[seq] = own;
    if (!send && completion == Completion::request) {
      ranks_[static_cast<std::size_t>(rank)].cancellable[seq] = true;
    }
    const bool buffered =
        completion == Completion::buffered || completion == Completion::buffered_request;
    if (buffered) buffer(rank, seq);
    if (completion == Completion::blocking) {
      closed(rank, seq);
    } else if (completion != Completion::buffered) {
      RankState& state = ranks_[static_cast<std::size_t>(rank)];
      state.open.push_back(
          {seq, send ? rank : peer, send ? peer : rank, static_cast<int>(tag), any_source,
           completion == Completion::buffered_request, state.tests,
           fmt::format("{} {} {} tag {}", call, send ? "to" : "from",
                       any_source ? std::string("any source") : fmt::format("rank {}", peer),
                       tag == kAnyTagInTrace ? std::string("any") : std::to_string(tag))});
    }
  }

  void wait(int rank, const std::vector<std::string_view>& w) {
    const std::int64_t src = integer(w[2], "source"), dst = integer(w[3], "destination");
    const std::int64_t tag = integer(w[4], "tag");
    auto& open = ranks_[static_cast<std::size_t>(rank)].open;
    const auto it = std::find_if(open.begin(), open.end(), [&](const OpenRequest& r) {
      return (r.src == src || r.any_source) && r.dst == dst &&
             (r.tag == tag || r.tag == kAnyTagInTrace);
    });
    if (it == open.end()) {
      // A nonblocking collective's request: TI names none, so the oldest (MPI starts them in
      // one order on every rank). Without one, as SMPI's replay: a test() already completed it.
      auto& collectives = ranks_[static_cast<std::size_t>(rank)].open_collectives;
      if (!collectives.empty()) {
        closed(rank, collectives.front());
        collectives.erase(collectives.begin());
      }
      return;
    }
    if (!it->buffered) closed(rank, it->seq);
    open.erase(it);
  }

  /// A request still open when its rank finalizes was never completed: MPI says every one
  /// must be (MPI_Finalize). One that a later `test` may have completed is not counted (TI
  /// does not say which request a test was for).
  void unfinished_requests(int rank) {
    for (const OpenRequest& r : ranks_[static_cast<std::size_t>(rank)].open) {
      if (r.buffered || ranks_[static_cast<std::size_t>(rank)].tests > r.tests) continue;
      const Location posted = ranks_[static_cast<std::size_t>(rank)].where[r.seq];
      unfinished_.push_back(fmt::format(
          "{}:{}: rank {} op #{} ({}) is still open when the rank finalizes at line {}: no wait "
          "completed it",
          files_[posted.file].name, posted.line, rank, r.seq, r.call, where_.line));
    }
    for (const std::uint64_t seq : ranks_[static_cast<std::size_t>(rank)].open_collectives) {
      const Location posted = ranks_[static_cast<std::size_t>(rank)].where[seq];
      unfinished_.push_back(fmt::format(
          "{}:{}: rank {} op #{} (a nonblocking collective) is still open when the rank "
          "finalizes at line {}: no wait completed it",
          files_[posted.file].name, posted.line, rank, seq, where_.line));
    }
  }

  void wait_all(int rank, const std::vector<std::string_view>&) {
    auto& open = ranks_[static_cast<std::size_t>(rank)].open;
    for (const OpenRequest& r : open) {
      if (!r.buffered) closed(rank, r.seq);
    }
    open.clear();
    auto& collectives = ranks_[static_cast<std::size_t>(rank)].open_collectives;
    for (const std::uint64_t seq : collectives) closed(rank, seq);
    collectives.clear();
  }

  void collective(int rank, OpKind op, std::uint64_t n, std::int64_t type, int root = kNoRank) {
    const ElementType element = smpi_type(type);
    const std::uint64_t seq =
        builder_->icollective(rank, op, element.dtype, in_elements(n, type, element), 0, root);
    posted(rank, seq);
    if (nonblocking_) {
      ranks_[static_cast<std::size_t>(rank)].open_collectives.push_back(seq);
    } else {
      closed(rank, seq);
    }
  }

  /// SMPI 3.32 writes MPI_Reduce_scatter_block as `reducescatter 0 0 DTYPE`, whatever the
  /// count and world: fewer words than a count per rank and COMP, all zeros but the last.
  bool block_reduce_scatter(const std::vector<std::string_view>& w) const {
    const auto p = static_cast<std::size_t>(builder_->world_size());
    if (w.size() >= p + 3 || w.size() < 4) return false;
    return std::all_of(w.begin() + 2, w.end() - 1, [](std::string_view v) { return v == "0"; });
  }

  /// Per rank: how many elements go to it (or come from it); nullopt: no message.
  using Counts = std::vector<std::optional<std::uint64_t>>;

  /// `counts` for every rank but `self`.
  static Counts others(const std::vector<std::uint64_t>& counts, int self) {
    Counts out(counts.begin(), counts.end());
    out[static_cast<std::size_t>(self)] = std::nullopt;
    return out;
  }
  /// `n` for rank `peer` alone.
  Counts only(int peer, std::uint64_t n) const {
    Counts out(static_cast<std::size_t>(builder_->world_size()));
    out[static_cast<std::size_t>(peer)] = n;
    return out;
  }

  /// `w[first .. first + p)`: a count per rank.
  std::vector<std::uint64_t> counts_at(const std::vector<std::string_view>& w,
                                       std::size_t first) const {
    const auto p = static_cast<std::size_t>(builder_->world_size());
    if (w.size() < first + p) {
      fail(fmt::format("{} needs a count per rank ({}), got {} arguments", w[1], p, w.size() - 2));
    }
    std::vector<std::uint64_t> counts;
    for (std::size_t i = first; i < first + p; ++i) counts.push_back(count(w[i], "count"));
    return counts;
  }

  /// A v-collective as the messages it consists of, so that each pair may have its own count
  /// (ranklab's collectives take one per rank): `to[j]` elements to rank j, `from[j]` from
  /// rank j, all posted, then all waited for. They travel in a group of their own,
  /// `vcollectives`, so they never match the program's own messages; a receive smaller
  /// than what its peer sends is a mismatch on replay, as any receive.
  void exchange(int rank, const Counts& to, std::int64_t send_type, const Counts& from,
                std::int64_t recv_type) {
    if (!v_group_) {
      std::vector<int> all(static_cast<std::size_t>(builder_->world_size()));
      std::iota(all.begin(), all.end(), 0);
      v_group_ = builder_->add_group("vcollectives", std::move(all));
    }
    std::vector<std::uint64_t> posts;
    const auto post = [&](bool send, int peer, std::uint64_t n, std::int64_t type) {
      const ElementType element = smpi_type(type);
      const std::uint64_t elements = in_elements(n, type, element);
      const std::uint64_t seq =
          send ? builder_->isend(rank, peer, element.dtype, elements, 0, *v_group_)
               : builder_->irecv(rank, peer, element.dtype, elements, 0, *v_group_);
      posted(rank, seq);
      ranks_[static_cast<std::size_t>(rank)].posted_as[seq] = {true, false, element.dtype,
                                                              elements};
      posts.push_back(seq);
    };
    for (std::size_t j = 0; j < to.size(); ++j) {
      if (to[j]) post(true, static_cast<int>(j), *to[j], send_type);
    }
    for (std::size_t j = 0; j < from.size(); ++j) {
      if (from[j]) post(false, static_cast<int>(j), *from[j], recv_type);
    }
    for (const std::uint64_t seq : posts) closed(rank, seq);
  }

  // ---- the table of actions -------------------------------------------------------------

  using Words = std::vector<std::string_view>;
  /// Re-issues one action of rank `rank` (its words `w`: rank, name, arguments).
  using Handler = void (Importer::*)(int rank, const Words& w);
  /// Why this form of an action cannot be replayed ("" if it can).
  using Refusal = std::string_view (Importer::*)(const Words& w) const;

  /// The arguments an action needs: `fixed` ones and `per_rank` more for every rank of the
  /// world, laid out as `usage` says (what the error shows when some are missing).
  struct Arity {
    std::size_t fixed;
    std::size_t per_rank;
    std::string_view usage;  ///< empty: none needed
  };

  /// One action of TI: its name (lowercase, a nonblocking collective's without its `i`),
  /// the arguments it needs, a form of it TI records too little of, and its handler.
  struct Action {
    std::string_view name;
    Arity arity;
    Handler handle = nullptr;
    Refusal refuses = nullptr;
  };

  /// send, recv and their kinds (ssend, ibsend, irecv, ...): each entry says how it completes.
  template <bool kSend, Completion kCompletion>
  void p2p(int rank, const Words& w) {
    point_to_point(rank, w, kSend, kCompletion);
  }

  static constexpr Arity kNoArguments{0, 0, {}};
  static constexpr Arity kSendArguments{3, 0, "DST TAG COUNT [DTYPE]"};
  static constexpr Arity kRecvArguments{3, 0, "SRC TAG COUNT [DTYPE]"};
  static constexpr Arity kRootedArguments{2, 0, "SENDCOUNT RECVCOUNT [ROOT [DT1 [DT2]]]"};
  /// Every action, by name (defined after the class: it names the handlers below).
  static const Action kActions[];
  /// The action named `name`, or nullptr.
  static const Action* find_action(std::string_view name);

  /// One line, as steps: count it, read its name, refuse what TI carries too little of,
  /// check the arguments its entry needs, re-issue it.
  void action(const Words& w) {
    const int rank = static_cast<int>(*parse_whole<std::int64_t>(w[0]));
    ++state(rank).actions;
    std::string name(w[1]);
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    // ibarrier, ibcast, iallreduce, ...: the collective, left open until a wait.
    nonblocking_ = is_nonblocking_collective(name);
    if (nonblocking_) name.erase(0, 1);
    if (const std::string_view why = refused_action(name); !why.empty()) {
      fail(fmt::format("{}: {}", name, why));
    }
    const Action* action = find_action(name);
    if (action == nullptr) fail(fmt::format("unknown or unsupported action {}", quote_input(w[1])));
    if (action->refuses != nullptr) {
      if (const std::string_view why = (this->*action->refuses)(w); !why.empty()) {
        fail(fmt::format("{}: {}", name, why));
      }
    }
    const Arity& arity = action->arity;
    if (!arity.usage.empty()) need(w, arity.fixed + arity.per_rank * world(), arity.usage);
    (this->*action->handle)(rank, w);
  }

  // ---- the actions' handlers (their arguments counted by the table) ---------------------

  RankState& state(int rank) { return ranks_[static_cast<std::size_t>(rank)]; }
  std::size_t world() const { return static_cast<std::size_t>(builder_->world_size()); }

  void init(int rank, const Words& w) {
    state(rank).default_type = w.size() > 2 ? 0 : 6;  // SMPI: MPI_DOUBLE with an argument
  }
  void finalize(int rank, const Words&) { unfinished_requests(rank); }
  /// A test may complete requests; TI does not say which, and a later wait finds none.
  void test(int rank, const Words&) { ++state(rank).tests; }
  /// comm_size, comm_split, ...: nothing to re-issue (SMPI's replay does nothing either).
  void nothing(int, const Words&) {}
  void compute(int rank, const Words& w) {
    builder_->compute(rank, {.flops = amount(w[2], "FLOPs")});
  }
  void sleep(int rank, const Words& w) {
    builder_->compute(rank, {.seconds = amount(w[2], "seconds")});
  }
  void barrier(int rank, const Words&) { collective(rank, OpKind::barrier, 0, 6); }

  /// waitany|waitsome: which request it completed, TI does not say (`waitAny N`): waiting
  /// for a guess could block where the program did not, so the requests stay open to the
  /// next wait that names them, waitall or the rank's end. A recording that ends in it (SMPI
  /// stopped there) was blocked in its requests.
  void wait_any(int rank, const Words&) {
    RankState& waiting = state(rank);
    ++waiting.tests;
    waiting.wait_any_at = waiting.actions;
  }

  /// bcast COUNT [ROOT [DTYPE]]
  void bcast(int rank, const Words& w) {
    const int root = w.size() > 3 ? rank_arg(w[3], "root") : 0;
    collective(rank, OpKind::broadcast, count(w[2], "count"), type_arg(w, 4, rank),
                    root);
  }

  /// reduce COUNT COMP [ROOT [DTYPE]]
  void reduce(int rank, const Words& w) {
    const int root = w.size() > 4 ? rank_arg(w[4], "root") : 0;
    collective(rank, OpKind::reduce, count(w[2], "count"), type_arg(w, 5, rank),
                    root);
    builder_->compute(rank, {.flops = amount(w[3], "COMP")});
  }

  /// allreduce COUNT COMP [DTYPE]
  void allreduce(int rank, const Words& w) {
    collective(rank, OpKind::all_reduce, count(w[2], "count"),
                    type_arg(w, 4, rank));
    builder_->compute(rank, {.flops = amount(w[3], "COMP")});
  }

  /// alltoall|allgather SENDCOUNT RECVCOUNT [DT1 [DT2]]
  template <OpKind kOp>
  void one_count(int rank, const Words& w) {
    collective(rank, kOp, count(w[2], "count"), type_arg(w, 4, rank));
  }

  std::string_view refuse_block_reduce_scatter(const Words& w) const {
    if (!block_reduce_scatter(w)) return {};
    return "MPI_Reduce_scatter_block, which SMPI 3.32 records without its count "
           "(`reducescatter 0 0 DTYPE`): TI carries too little to replay it";
  }

  /// reducescatter RECVCOUNT per rank, COMP [DTYPE]
  void reduce_scatter(int rank, const Words& w) {
    const std::size_t p = world();
    const std::vector<std::uint64_t> counts = counts_at(w, 2);
    const std::int64_t type = type_arg(w, 3 + p, rank);
    if (std::adjacent_find(counts.begin(), counts.end(), std::not_equal_to<>()) == counts.end()) {
      collective(rank, OpKind::reduce_scatter, counts[0], type);
    } else {
      // Unequal blocks: the reduction of them all at rank 0, then rank 0 hands each its own.
      std::uint64_t total = 0;
      for (const std::uint64_t c : counts) total += c;
      if (total > kMaxTraceCount) fail("reducescatter: the counts add up to more than 2^48");
      collective(rank, OpKind::reduce, total, type, 0);
      exchange(rank, rank == 0 ? others(counts, 0) : Counts(p), type,
                    rank == 0 ? Counts(p) : only(0, counts[static_cast<std::size_t>(rank)]),
                    type);
    }
    builder_->compute(rank, {.flops = amount(w[2 + p], "COMP")});
  }

  /// scan|exscan COUNT COMP [DTYPE]: ranklab has no prefix reduction; its messages as the
  /// linear algorithm sends them (rank r's prefix to rank r + 1).
  void scan(int rank, const Words& w) {
    const std::size_t p = world();
    const std::uint64_t n = count(w[2], "count");
    const std::int64_t type = type_arg(w, 4, rank);
    exchange(rank, rank + 1 < static_cast<int>(p) ? only(rank + 1, n) : Counts(p), type,
                  rank > 0 ? only(rank - 1, n) : Counts(p), type);
    builder_->compute(rank, {.flops = amount(w[3], "COMP")});
  }

  /// gatherv SENDCOUNT RECVCOUNTS... [ROOT [DT1 [DT2]]] (zeros at the other ranks)
  void gatherv(int rank, const Words& w) {
    const std::size_t p = world();
    const std::uint64_t n = count(w[2], "count");
    const int root = w.size() > 3 + p ? rank_arg(w[3 + p], "root") : 0;
    const std::int64_t send_type = type_arg(w, 4 + p, rank);
    const std::int64_t recv_type = type_arg(w, 5 + p, rank);
    exchange(rank, rank == root ? Counts(p) : only(root, n), send_type,
                  rank == root ? others(counts_at(w, 3), root) : Counts(p), recv_type);
  }

  /// scatterv SENDCOUNTS... RECVCOUNT [ROOT [DT1 [DT2]]] (zeros at the other ranks)
  void scatterv(int rank, const Words& w) {
    const std::size_t p = world();
    const std::uint64_t n = count(w[2 + p], "count");
    const int root = w.size() > 3 + p ? rank_arg(w[3 + p], "root") : 0;
    const std::int64_t send_type = type_arg(w, 4 + p, rank);
    const std::int64_t recv_type = type_arg(w, 5 + p, rank);
    exchange(rank, rank == root ? others(counts_at(w, 2), root) : Counts(p), send_type,
                  rank == root ? Counts(p) : only(root, n), recv_type);
  }

  /// allgatherv SENDCOUNT RECVCOUNTS... [DT1 [DT2]]
  void allgatherv(int rank, const Words& w) {
    const std::size_t p = world();
    const std::uint64_t n = count(w[2], "count");
    exchange(rank, others(std::vector<std::uint64_t>(p, n), rank),
                  type_arg(w, 3 + p, rank), others(counts_at(w, 3), rank),
                  type_arg(w, 4 + p, rank));
  }

  /// alltoallv SENDSIZE SENDCOUNTS... RECVSIZE RECVCOUNTS... [DT1 [DT2]]
  void alltoallv(int rank, const Words& w) {
    const std::size_t p = world();
    exchange(rank, others(counts_at(w, 3), rank), type_arg(w, 4 + 2 * p, rank),
                  others(counts_at(w, 4 + p), rank), type_arg(w, 5 + 2 * p, rank));
  }

  /// gather|scatter SENDCOUNT [RECVCOUNT] ROOT DT1 DT2 (SMPI leaves out a RECVCOUNT of 0,
  /// as non-roots of a gather may pass), or the short forms SENDCOUNT RECVCOUNT [ROOT].
  /// Each rank's unit is its own side of the exchange: what the root takes from (gather) or
  /// gives to (scatter) each rank, and what each other rank gives or takes; so sides that
  /// disagree are a mismatch on replay, and MPI_IN_PLACE's send count of 0 at a gather's
  /// root is never compared.
  template <OpKind kOp>
  void rooted_exchange(int rank, const std::vector<std::string_view>& w) {
    const bool no_recv_count = w.size() == 6;
    const std::size_t root_at = no_recv_count ? 3 : 4;
    const int root = w.size() > root_at ? rank_arg(w[root_at], "root") : 0;
    const std::uint64_t sent = count(w[2], "count");
    const std::uint64_t received = no_recv_count ? 0 : count(w[3], "count");
    const std::int64_t send_type = type_arg(w, root_at + 1, rank);
    const std::int64_t recv_type = type_arg(w, root_at + 2, rank);
    // The root's side of a gather is its receive, of a scatter its send; the others' the
    // opposite.
    const bool receiving_side = (kOp == OpKind::gather) == (rank == root);
    if (receiving_side) {
      collective(rank, kOp, received, recv_type, root);
    } else {
      collective(rank, kOp, sent, send_type, root);
    }
  }

  void sendrecv(int rank, const std::vector<std::string_view>& w) {
    const int dst = rank_arg(w[3], "destination");
    const std::int64_t src_word = integer(w[5], "source");
    const bool any = src_word == kAnySourceSmpi || src_word == kAnySourceMpi;
    const int src = any ? kNoRank : rank_arg(w[5], "source");
    const std::int64_t out_type = type_arg(w, 6, rank);
    const std::int64_t in_type = type_arg(w, 7, rank);
    const ElementType out = smpi_type(out_type);
    const ElementType in = smpi_type(in_type);
    const std::uint64_t out_count = in_elements(count(w[2], "count"), out_type, out);
    const std::uint64_t send = builder_->isend(rank, dst, out.dtype, out_count, 0);
    posted(rank, send);
    const std::uint64_t in_count = in_elements(count(w[4], "count"), in_type, in);
    const std::uint64_t recv = builder_->irecv(rank, src, in.dtype, in_count, 0);
    posted(rank, recv);
    ranks_[static_cast<std::size_t>(rank)].posted_as[send] = {
        true, !replayable_p2p_type(out_type), out.dtype, out_count};
    ranks_[static_cast<std::size_t>(rank)].posted_as[recv] = {
        true, !replayable_p2p_type(in_type), in.dtype, in_count};
    closed(rank, send);
    closed(rank, recv);
  }

  // ---- after matching -------------------------------------------------------------------

  /// An operation that never completed. If its rank's recording ended with it open or
  /// waiting for it (a deadlock stopped SMPI), it becomes pending. If the rank went on past
  /// it, that is the program's bug the replay is for: a send nobody receives (SMPI sent it
  /// eagerly) or a collective another rank never joins (a root or an eager algorithm let this
  /// one through) stays completed, so that the replay re-issues it and shows the deadlock it
  /// is under rendezvous. Only a receive gone past without a message contradicts itself.
  void settle_one(BuiltTrace& built, EventRef ref, const std::string& what) {
    TraceEvent& e = built.trace.ranks[static_cast<std::size_t>(ref.rank)][ref.index];
    const RankState& state = ranks_[static_cast<std::size_t>(ref.rank)];
    const std::uint64_t closed_at = state.closed_at[e.rank_seq];
    const bool gone_past = closed_at != 0 && closed_at != state.actions;
    if (gone_past && e.op != OpKind::recv) return;
    if (gone_past && !state.cancellable[e.rank_seq]) {
      fail_at(state.where[e.rank_seq],
              what + fmt::format(", yet rank {} went on past it (a receive cannot complete "
                                 "without a message)",
                                 e.rank));
    }
    // An irecv waited for without a message was cancelled (SMPI records no MPI_Cancel, only
    // the irecv and its wait): dropped, as a pending operation that nothing waits for.
    e.status = OpStatus::pending;
    e.blocked = (closed_at != 0 && !gone_past) ||
                (closed_at == 0 && state.wait_any_at != 0 && state.wait_any_at == state.actions);
    if (e.op == OpKind::recv) e.msg = {};
  }

  /// A matched receive records the message (as the fabric does), unless its own buffer
  /// cannot take it: another element type, or fewer elements (fewer bytes where either side
  /// is a type whose count SMPI writes in bytes). Then it
  /// keeps its own, so the replay posts it as the program did and reports the mismatch with
  /// both calls.
  void keep_receive_signatures(Trace& trace) const {
    for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
      for (TraceEvent& e : trace.ranks[r]) {
        if (e.op != OpKind::recv || !e.msg.valid()) continue;
        const Signature& own = ranks_[r].posted_as[e.rank_seq];
        if (!own.known) continue;
        const Signature& sent =
            ranks_[static_cast<std::size_t>(e.msg.sender)].posted_as[e.msg.sender_seq];
        const bool fits = own.in_bytes || sent.in_bytes
                              ? own.count * size_of(own.dtype) >= e.bytes
                              : own.dtype == e.dtype && own.count >= e.count;
        if (fits) continue;
        e.dtype = own.dtype;
        e.count = own.count;
        e.bytes = own.count * size_of(own.dtype);
      }
    }
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
  std::vector<std::string> unfinished_;  ///< requests open at their rank's finalize
  bool nonblocking_ = false;             ///< the collective being read is ibcast, ibarrier...
  std::optional<std::uint32_t> v_group_;  ///< the group v-collectives' messages travel in
  bool first_pass_ = false;               ///< finding the buffered sends' receives
  bool saw_buffered_ = false;             ///< a bsend or ibsend was read
  /// key(rank, rank_seq) of a buffered send -> the rank_seq after whose completion it closes.
  std::unordered_map<std::uint64_t, std::uint64_t> close_buffered_;
};

// The table of TI actions (Importer::action reads it).
using I = Importer;
const Importer::Action Importer::kActions[] = {
    {"init", kNoArguments, &I::init},
    {"finalize", kNoArguments, &I::finalize},
    {"test", kNoArguments, &I::test},
    {"testall", kNoArguments, &I::test},
    {"testany", kNoArguments, &I::test},
    {"testsome", kNoArguments, &I::test},
    {"waitany", kNoArguments, &I::wait_any},
    {"waitsome", kNoArguments, &I::wait_any},
    {"comm_size", kNoArguments, &I::nothing},
    {"comm_split", kNoArguments, &I::nothing},
    {"comm_dup", kNoArguments, &I::nothing},
    {"location", kNoArguments, &I::nothing},
    {"compute", {1, 0, "FLOPS"}, &I::compute},
    {"sleep", {1, 0, "SECONDS"}, &I::sleep},
    {"send", kSendArguments, &I::p2p<true, Completion::blocking>},
    {"ssend", kSendArguments, &I::p2p<true, Completion::blocking>},
    {"rsend", kSendArguments, &I::p2p<true, Completion::blocking>},
    {"bsend", kSendArguments, &I::p2p<true, Completion::buffered>},
    {"isend", kSendArguments, &I::p2p<true, Completion::request>},
    {"issend", kSendArguments, &I::p2p<true, Completion::request>},
    {"irsend", kSendArguments, &I::p2p<true, Completion::request>},
    {"ibsend", kSendArguments, &I::p2p<true, Completion::buffered_request>},
    {"recv", kRecvArguments, &I::p2p<false, Completion::blocking>},
    {"irecv", kRecvArguments, &I::p2p<false, Completion::request>},
    {"start", {3, 0, "ENDPOINT TAG BYTES [DTYPE]"}, &I::persistent_start},
    {"wait", {3, 0, "SRC DST TAG"}, &I::wait},
    {"waitall", kNoArguments, &I::wait_all},
    {"sendrecv", {4, 0, "SENDCOUNT DST RECVCOUNT SRC [DT1 [DT2]]"}, &I::sendrecv},
    {"barrier", kNoArguments, &I::barrier},
    {"bcast", {1, 0, "COUNT [ROOT [DTYPE]]"}, &I::bcast},
    {"reduce", {2, 0, "COUNT COMP [ROOT [DTYPE]]"}, &I::reduce},
    {"allreduce", {2, 0, "COUNT COMP [DTYPE]"}, &I::allreduce},
    {"alltoall", {2, 0, "SENDCOUNT RECVCOUNT [DT1 [DT2]]"}, &I::one_count<OpKind::all_to_all>},
    {"allgather", {2, 0, "SENDCOUNT RECVCOUNT [DT1 [DT2]]"},
     &I::one_count<OpKind::all_gather>},
    {"gather", kRootedArguments, &I::rooted_exchange<OpKind::gather>},
    {"scatter", kRootedArguments, &I::rooted_exchange<OpKind::scatter>},
    {"reducescatter", {1, 1, "RECVCOUNT per rank, COMP [DTYPE]"}, &I::reduce_scatter,
     &I::refuse_block_reduce_scatter},
    {"scan", {2, 0, "COUNT COMP [DTYPE]"}, &I::scan},
    {"exscan", {2, 0, "COUNT COMP [DTYPE]"}, &I::scan},
    {"gatherv", {1, 1, "SENDCOUNT RECVCOUNTS..."}, &I::gatherv},
    {"scatterv", {1, 1, "SENDCOUNTS... RECVCOUNT [ROOT [DT1 [DT2]]]"}, &I::scatterv},
    {"allgatherv", {1, 1, "SENDCOUNT RECVCOUNTS... [DT1 [DT2]]"}, &I::allgatherv},
    {"alltoallv", {2, 2, "SENDSIZE SENDCOUNTS... RECVSIZE RECVCOUNTS... [DT1 [DT2]]"},
     &I::alltoallv},
};

const Importer::Action* Importer::find_action(std::string_view name) {
  for (const Action& action : kActions) {
    if (action.name == name) return &action;
  }
  return nullptr;
}

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
    index = !parse_whole<std::int64_t>(words[0]) || words.size() < 2;
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
