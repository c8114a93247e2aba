// The SimGrid TI importer (traces/simgrid_ti.hpp is its interface and format): files ->
// lines -> actions, each action re-issued into a TraceBuilder; then messages are matched and
// what never completed is told apart from what is malformed. Private to traces/. One class,
// its definitions in files by purpose:
//   simgrid_ti.cpp            the reader: the files, the two passes, the world's size
//   simgrid_ti_arguments.cpp  an action's words as counts, ranks, tags and datatypes
//   simgrid_ti_requests.cpp   point-to-point: posting sends and receives, waiting for them
//   simgrid_ti_actions.cpp    the table of actions and their handlers (collectives mostly)
//   simgrid_ti_settle.cpp     after matching: buffered sends' plan, what never completed
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "traces/detail/simgrid_ti_vocabulary.hpp"
#include "traces/detail/words.hpp"
#include "traces/event.hpp"
#include "traces/trace_builder.hpp"

namespace ranklab::detail::ti {

inline constexpr int kAnySourceSmpi = -333;  // what SMPI 3.32 records for MPI_ANY_SOURCE
inline constexpr int kAnySourceMpi = -555;   // MPI_ANY_SOURCE itself (older recordings)
inline constexpr int kAnyTagSmpi = -444;     // MPI_ANY_TAG

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
  Trace run();

 private:
  Trace import();

  static std::uint64_t key(int rank, std::uint64_t seq) {
    return (static_cast<std::uint64_t>(rank) << 40) | seq;  // seq < 2^40: a file holds fewer
  }

  /// For each matched buffered send B (rank s to rank q, received by q's R): the operation
  /// of s after whose completion R is surely posted, the earlier of s's first world
  /// collective at or after R's phase and after B, and s's first receive after B of a
  /// message q sent after R. Events are indexed by rank_seq here (the builder numbers them
  /// from 0 without gaps).
  void plan_buffered(const Trace& trace);

  /// After the rank's operation `seq` completed: wait for the buffered sends planned for it.
  void close_buffered_after(int rank, std::uint64_t seq);
  struct OpenRequest {
    std::uint64_t seq = 0;
    int src = 0;
    int dst = 0;
    int tag = 0;
    bool any_source = false;
    bool buffered = false;    ///< ibsend: complete once posted, whatever the receiver does
    std::uint64_t tests = 0;  ///< the rank's untargeted tests before it was posted
    std::string call;         ///< "isend to rank 1 tag 3" for a report
  };
  /// A request still open when its rank finalized, which no test may have completed: a leak
  /// unless the other side of its message completed it (unfinished_requests decides).
  struct OpenAtEnd {
    int rank = 0;
    std::uint64_t seq = 0;
    std::string call;  ///< empty: a nonblocking collective, never excused
    std::uint32_t finalize_line = 0;
  };
  /// A send's or receive's own buffer, as the program posted it (matching records the
  /// message's): in ranklab's elements, and as SMPI wrote it.
  struct Signature {
    bool known = false;  ///< false: not a send or receive, or a receive that probed
    DataType dtype = DataType::u8;
    std::uint64_t count = 0;     ///< ranklab's elements
    std::int64_t smpi = 6;       ///< SMPI's datatype id
    std::uint64_t recorded = 0;  ///< the count as SMPI wrote it, in elements of `smpi`
  };
  struct RankState {
    std::vector<OpenRequest> open;
    std::vector<Location> where;           ///< by rank_seq: the line that posted it
    std::vector<std::uint64_t> closed_at;  ///< by rank_seq: the action that waited (0: never)
    std::vector<Signature> posted_as;      ///< by rank_seq: a receive's own type and count
    std::vector<bool> cancellable;         ///< by rank_seq: an irecv (MPI_Cancel may end it)
    std::vector<bool> tested;              ///< by rank_seq: a `test SRC DST TAG` named it
    std::uint64_t actions = 0;             ///< actions so far (numbered from 1)
    std::int64_t default_type = 6;         ///< MPI_BYTE unless `init` says MPI_DOUBLE
    std::uint64_t tests = 0;               ///< untargeted tests so far (testall, ...)
    std::uint64_t wait_any_at = 0;         ///< the last waitany/waitsome action (0: none)
    std::set<std::uint64_t> buffered;      ///< first pass: rank_seq of its buffered sends
    /// Second pass: (rank_seq after which to close, rank_seq) of buffered sends still open.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> buffered_open;
    std::vector<std::uint64_t> open_collectives;  ///< nonblocking ones not yet waited for
    std::string last_test;  ///< "SRC DST TAG" of the last test that named a collective
  };

  // ---- the reader (simgrid_ti.cpp) --------------------------------------------------------

  [[noreturn]] void fail_at(Location at, const std::string& reason) const;
  [[noreturn]] void fail(const std::string& reason) const { fail_at(where_, reason); }

  /// The world: one more than the largest rank any line starts with.
  int world_size();

  // ---- arguments (simgrid_ti_arguments.cpp; tag_arg, counts_at too) ---------------------

  std::int64_t integer(std::string_view word, std::string_view what) const;
  std::uint64_t count(std::string_view word, std::string_view what) const;
  double amount(std::string_view word, std::string_view what) const;
  /// `n` elements of SMPI type `type` as elements of ranklab's type, within a trace's limit
  /// (an SMPI element may be several of ranklab's: 2^48 long doubles are 2^52 bytes).
  std::uint64_t in_elements(std::uint64_t n, std::int64_t type, const ElementType& element) const;
  int rank_arg(std::string_view word, std::string_view what) const;
  std::int64_t type_arg(const std::vector<std::string_view>& w, std::size_t i, int rank) const;
  void need(const std::vector<std::string_view>& w, std::size_t args, std::string_view usage) const;

  // ---- requests (simgrid_ti_requests.cpp), collectives (simgrid_ti_actions.cpp) ---------

  void posted(int rank, std::uint64_t seq);
  void closed(int rank, std::uint64_t seq);

  /// How a send or receive completes: `blocking` ones before the next action; `buffered`
  /// sends (bsend, ibsend) by MPI's definition at once, so nothing ever waits for them (the
  /// rank's end does, as MPI_Buffer_detach would); the others when a wait names them.
  enum class Completion { blocking, buffered, request, buffered_request };

  void point_to_point(int rank, const std::vector<std::string_view>& w, bool send,
                      Completion completion);

  /// A buffered send: closed at once in the first pass (only its match matters there), and
  /// in the second after the collective plan_buffered chose (open to the end without one).
  void buffer(int rank, std::uint64_t seq);

  int tag_arg(std::string_view word, bool send) const;

  /// `Start ENDPOINT TAG BYTES DTYPE`: SMPI records a persistent request's destination,
  /// which for a receive is the rank itself (its source is not recorded: any source), and
  /// its size in bytes. A persistent send to the rank itself reads as a receive.
  void persistent_start(int rank, const std::vector<std::string_view>& w);

  /// Posts one send or receive (`peer` kNoRank: any source) with the program's own
  /// signature, and completes it as `completion` says.
  void post_p2p(int rank, std::string_view call, bool send, int peer, int tag, const Signature& own,
                Completion completion);

  /// The open request a `wait SRC DST TAG` or `test SRC DST TAG` names (SMPI 3.32 writes
  /// the request's envelope, any source as the matched one): of those that match, the
  /// oldest no test named (one a test named and nothing waited for was completed by it),
  /// else the oldest; end() if none.
  std::vector<OpenRequest>::iterator named_request(int rank, const std::vector<std::string_view>& w);

  /// The rank's oldest open nonblocking collective that no test completed, else its oldest
  /// (end() when none is open): what a wait or test naming no point-to-point request means.
  std::vector<std::uint64_t>::iterator oldest_untested_collective(int rank);

  void wait(int rank, const std::vector<std::string_view>& w);

  /// A request still open when its rank finalizes was never completed: MPI says every one
  /// must be (MPI_Finalize). One a `test` named, or that an untargeted test (testall, ...)
  /// after it may have completed, is not counted: MPI writes no test of a completed request,
  /// so a request's last test that nothing waited for completed it. The rest are kept in
  /// open_at_end_ for unfinished_requests(trace).
  void unfinished_requests(int rank);

  /// The requests open at their rank's end that are leaks, into unfinished_: those whose
  /// message nobody completed (no message, or the other side left open as well). One whose
  /// other side completed it was released by MPI_Request_free, which TI does not record (a
  /// send request freed once posted still delivers its message).
  void unfinished_requests(const Trace& trace);

  void wait_all(int rank, const std::vector<std::string_view>&);

  void collective(int rank, OpKind op, std::uint64_t n, std::int64_t type, int root = kNoRank);

  /// SMPI 3.32 writes MPI_Reduce_scatter_block as `reducescatter 0 0 DTYPE`, whatever the
  /// count and world: fewer words than a count per rank and COMP, all zeros but the last.
  bool block_reduce_scatter(const std::vector<std::string_view>& w) const;

  /// Per rank: how many elements go to it (or come from it); nullopt: no message.
  using Counts = std::vector<std::optional<std::uint64_t>>;

  /// `counts` for every rank but `self`.
  static Counts others(const std::vector<std::uint64_t>& counts, int self);
  /// `n` for rank `peer` alone.
  Counts only(int peer, std::uint64_t n) const;

  /// `w[first .. first + p)`: a count per rank.
  std::vector<std::uint64_t> counts_at(const std::vector<std::string_view>& w,
                                       std::size_t first) const;

  /// A v-collective as the messages it consists of, so that each pair may have its own count
  /// (ranklab's collectives take one per rank): `to[j]` elements to rank j, `from[j]` from
  /// rank j, all posted, then all waited for. They travel in a group of their own,
  /// `vcollectives`, so they never match the program's own messages; a receive smaller
  /// than what its peer sends is a mismatch on replay, as any receive.
  void exchange(int rank, const Counts& to, std::int64_t send_type, const Counts& from,
                std::int64_t recv_type);

  // ---- the table of actions (simgrid_ti_actions.cpp) ------------------------------------

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
  /// Every action, by name (simgrid_ti_actions.cpp, beside the handlers it names).
  static const Action kActions[];
  /// The action named `name`, or nullptr.
  static const Action* find_action(std::string_view name);

  /// One line, as steps: count it, read its name, refuse what TI carries too little of,
  /// check the arguments its entry needs, re-issue it.
  void action(const Words& w);

  // ---- the actions' handlers (their arguments counted by the table) ---------------------

  RankState& state(int rank) { return ranks_[static_cast<std::size_t>(rank)]; }
  std::size_t world() const { return static_cast<std::size_t>(builder_->world_size()); }

  void init(int rank, const Words& w);
  void finalize(int rank, const Words&);
  /// `test SRC DST TAG` (SMPI 3.29 on) names the request it tests: marked tested. One that
  /// names no point-to-point request tests a nonblocking collective (the run of tests of one
  /// loop, the oldest untested one). An untargeted one (testall, testany, testsome, or a
  /// test when nothing names) may complete any request posted before it.
  void test(int rank, const Words& w);
  /// comm_size, comm_split, ...: nothing to re-issue (SMPI's replay does nothing either).
  void nothing(int, const Words&);
  void compute(int rank, const Words& w);
  void sleep(int rank, const Words& w);
  void barrier(int rank, const Words&);

  /// waitany|waitsome: which request it completed, TI does not say (`waitAny N`): waiting
  /// for a guess could block where the program did not, so the requests stay open to the
  /// next wait that names them, waitall or the rank's end. A recording that ends in it (SMPI
  /// stopped there) was blocked in its requests.
  void wait_any(int rank, const Words&);

  /// bcast COUNT [ROOT [DTYPE]]
  void bcast(int rank, const Words& w);

  /// reduce COUNT COMP [ROOT [DTYPE]]
  void reduce(int rank, const Words& w);

  /// allreduce COUNT COMP [DTYPE]
  void allreduce(int rank, const Words& w);

  /// alltoall|allgather SENDCOUNT RECVCOUNT [DT1 [DT2]]
  template <OpKind kOp>
  void one_count(int rank, const Words& w);

  std::string_view refuse_block_reduce_scatter(const Words& w) const;

  /// reducescatter RECVCOUNT per rank, COMP [DTYPE]
  void reduce_scatter(int rank, const Words& w);

  /// scan|exscan COUNT COMP [DTYPE]: ranklab has no prefix reduction; its messages as the
  /// linear algorithm sends them (rank r's prefix to rank r + 1).
  void scan(int rank, const Words& w);

  /// gatherv SENDCOUNT RECVCOUNTS... [ROOT [DT1 [DT2]]] (zeros at the other ranks)
  void gatherv(int rank, const Words& w);

  /// scatterv SENDCOUNTS... RECVCOUNT [ROOT [DT1 [DT2]]] (zeros at the other ranks)
  void scatterv(int rank, const Words& w);

  /// allgatherv SENDCOUNT RECVCOUNTS... [DT1 [DT2]]
  void allgatherv(int rank, const Words& w);

  /// alltoallv SENDSIZE SENDCOUNTS... RECVSIZE RECVCOUNTS... [DT1 [DT2]]
  void alltoallv(int rank, const Words& w);

  /// gather|scatter SENDCOUNT [RECVCOUNT] ROOT DT1 DT2 (SMPI leaves out a RECVCOUNT of 0,
  /// as non-roots of a gather may pass), or the short forms SENDCOUNT RECVCOUNT [ROOT].
  /// Each rank's unit is its own side of the exchange: what the root takes from (gather) or
  /// gives to (scatter) each rank, and what each other rank gives or takes; so sides that
  /// disagree are a mismatch on replay, and MPI_IN_PLACE's send count of 0 at a gather's
  /// root is never compared.
  template <OpKind kOp>
  void rooted_exchange(int rank, const std::vector<std::string_view>& w);

  void sendrecv(int rank, const std::vector<std::string_view>& w);

  // ---- after matching (simgrid_ti_settle.cpp) -------------------------------------------

  /// An operation that never completed. If its rank's recording ended with it open or
  /// waiting for it (a deadlock stopped SMPI), it becomes pending. If the rank went on past
  /// it, that is the program's bug the replay is for: a send nobody receives (SMPI sent it
  /// eagerly) or a collective another rank never joins (a root or an eager algorithm let this
  /// one through) stays completed, so that the replay re-issues it and shows the deadlock it
  /// is under rendezvous. Only a receive gone past without a message contradicts itself.
  void settle_one(BuiltTrace& built, EventRef ref, const std::string& what);

  /// A receive that its rank went past without a message (`ref`), where an earlier irecv of
  /// that rank which a wait completed took a message that fits it: MPI_Cancel (which TI
  /// does not record) ended that irecv, so the message is this receive's, and the irecv
  /// becomes pending, dropped. False if there is none (the record contradicts itself).
  bool take_from_cancelled(BuiltTrace& built, EventRef ref);

  /// A matched receive records the message (as the fabric does), unless its own buffer
  /// cannot take it: another element type, or fewer elements. Then it keeps its own, so the
  /// replay posts it as the program did and reports the mismatch with both calls. A message
  /// whose SMPI types clash where ranklab's types are alike (MPI_UNSIGNED against MPI_INT)
  /// goes to type_mismatches_, for the replay to report.
  void keep_receive_signatures(Trace& trace);

  /// "message mismatch in world: rank 0 (op #0) sends 4 x MPI_UNSIGNED to rank 1 tag 0 at
  /// FILE:LINE; rank 1 (op #0) receives it into 4 x MPI_INT at FILE:LINE: WHY".
  std::string describe_type_mismatch(const Trace& trace, const TraceEvent& recv,
                                     const Signature& sent, const Signature& own,
                                     std::string_view why) const;

  /// How a message of a derived datatype (SMPI's -1, its size unknown) compares: equal only
  /// to a derived datatype (TI writes -1 for every one), by count; MPI_BYTE and MPI_PACKED
  /// take anything. Why it does not fit ("" if it does), for type_mismatches_.
  static std::string derived_clash(const Signature& sent, const Signature& own);

  /// "FILE:LINE" of the rank's operation `seq`.
  std::string line_of(int rank, std::uint64_t seq) const;

  void settle(BuiltTrace& built);

  /// Each event's file and line, for what refuses it later (replay).
  void locate(Trace& trace) const;

  std::vector<TiFile> files_;
  std::vector<RankState> ranks_;
  TraceBuilder* builder_ = nullptr;
  Location where_;
  nlohmann::json json_config_;
  std::vector<std::string> unfinished_;   ///< requests open at their rank's finalize
  std::vector<OpenAtEnd> open_at_end_;    ///< candidates for unfinished_
  std::vector<std::string> type_mismatches_;  ///< messages whose SMPI types clash
  // Actions with a derived datatype (SMPI's -1), which the report notes: type_arg counts
  // them, hence mutable.
  mutable std::uint64_t derived_actions_ = 0;
  mutable Location derived_first_;  ///< the first such action
  mutable Location derived_;        ///< the last one counted
  bool nonblocking_ = false;              ///< the collective being read is ibcast, ibarrier...
  std::optional<std::uint32_t> v_group_;  ///< the group v-collectives' messages travel in
  bool first_pass_ = false;               ///< finding the buffered sends' receives
  bool saw_buffered_ = false;             ///< a bsend or ibsend was read
  /// key(rank, rank_seq) of a buffered send -> the rank_seq after whose completion it closes.
  std::unordered_map<std::uint64_t, std::uint64_t> close_buffered_;
};

}  // namespace ranklab::detail::ti
