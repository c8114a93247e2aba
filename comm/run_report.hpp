// The outcome of a run: how it ended, each rank's fate, and the human report. Plain data
// and its text, in comm/ because every backend returns it: the emulator's Cluster and the
// MPI backend alike (the emulator's analyses fill it in: emulator/diagnosis/).
#pragma once

#include <cstdint>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "traces/event.hpp"

namespace ranklab {

/// "1 rank", "8 ranks"; "1 micro-batch", "2 micro-batches" with `plural_noun`. Every report
/// counts through it, so that none says "1 ranks".
std::string plural(std::size_t n, std::string_view noun, std::string_view plural_noun = {});

/// `text` without a leading "rank RANK: ", for a line that names the rank already (so that
/// none reads "rank 3: rank 3: ...").
std::string_view without_rank_prefix(int rank, std::string_view text);

/// How a run ended, in order of precedence. Each maps to a CLI exit code (DESIGN.md §7).
enum class RunStatus {
  ok,           ///< every rank returned (exit 0)
  deadlock,     ///< every live rank blocked with nothing able to complete them, or the
                ///< watchdog saw a rank wait past the timeout (exit 3)
  mismatch,     ///< a collective's members or a message's two sides disagreed (exit 4)
  rank_failed,  ///< a rank threw (exit 5)
  /// Every rank returned, but the program breaks a rule of MPI that this run let pass
  /// (exit 6): a send that completed only because it was buffered and would deadlock under
  /// rendezvous (culprit `potential-deadlock`), or a request still open when its rank ended
  /// (`request-leak`). MUST reports both as errors.
  unsafe,
};

int exit_code(RunStatus status);
const char* to_string(RunStatus status);

/// What became of one rank.
struct RankOutcome {
  enum class State { finished, failed, deadlocked, aborted };
  State state = State::finished;
  std::string error;  ///< what() of the exception that ended it, if any
};

/// "finished", "failed", "deadlocked", "aborted".
const char* to_string(RankOutcome::State state);

/// One operation a report names: which rank called what, in which group, and where in the
/// program the call was made.
struct ReportedOperation {
  int rank = -1;
  std::string op;     ///< "send", "recv", "all_reduce", ...
  std::string group;  ///< "world", "tp[0,1]"
  std::string call;   ///< "send to rank 1 tag 0 in world (4 x f32), op #3"
  CallSite site;      ///< the program's call; empty when unknown

  /// The call with its site: "send to rank 1 ... op #3 at pipeline.cpp:42 (backward_stage)".
  std::string describe() const;
};

/// Blocked operations that differ only in their rank (the same call, group and call site): one
/// line of the report, "ranks 0-510 (511 ranks): barrier #0 in world: barrier(), op #0 at ...".
struct BlockedCalls {
  std::vector<int> ranks;       ///< ascending
  ReportedOperation operation;  ///< the lowest rank's
};

/// What a culprit blames (docs/debugging.md, "Each kind of culprit"). Reports and JSON
/// print the names of one table (to_string): `send-cycle` for send_cycle.
enum class CulpritKind : std::uint8_t {
  none,  ///< no culprit (the run is ok): printed as ""
  lost_message,
  tag_mismatch,
  source_mismatch,
  group_mismatch,
  missing_participant,
  send_cycle,
  recv_cycle,
  collective_vs_p2p,
  p2p_cycle,
  deadlock,
  collective_order,
  collective_mismatch,
  message_mismatch,
  rank_failure,
  watchdog,
  nondeterminism,  ///< found by `explore` only
  potential_deadlock,
  request_leak,
};

/// "send-cycle", "tag-mismatch", ...; "" for none.
std::string_view to_string(CulpritKind kind);

/// What a failed run's report blames, in one line (docs/debugging.md lists the kinds).
struct Culprit {
  CulpritKind kind = CulpritKind::none;  ///< none if ok
  std::string text;        ///< one sentence naming the ranks, groups and calls
  std::vector<int> ranks;  ///< the ranks it names, the most to blame first
  std::vector<std::string> groups;            ///< the groups of its operations, in order
  std::vector<ReportedOperation> operations;  ///< the calls it names, where known
};

/// The culprit's kind as reports print it: to_string(culprit.kind).
std::string_view culprit_kind_name(const Culprit& culprit);

/// "culprit (KIND): TEXT": the line every failed run's and replay's report ends with; empty
/// if there is no culprit.
std::string culprit_line(const Culprit& culprit);

/// The events a rank completed last, oldest first, one report line each.
struct RankEvents {
  int rank = 0;
  std::vector<std::string> events;
};

/// The analysis of a failed run, section by section: what RunReport::details renders as
/// text and `--json` gives as data (docs/json.md), so that the two never disagree.
struct FailureAnalysis {
  std::string preamble;  ///< shown first: a mismatch's comparison, a collective-order table
  std::string headline;  ///< "DEADLOCK: ...", "WATCHDOG: ...", "RANK FAILURE: ..."
  bool deadlock = false;  ///< ranks ended blocked: the cycles and culprits sections too
  std::vector<ReportedOperation> blocked;  ///< by rank: the blocked ranks' operations, listed
  std::size_t blocked_total = 0;           ///< blocked ranks, listed or not
  /// Every blocked rank's operation, identical ones on one line, by lowest rank (the first
  /// kMaxListed lines): what the text lists.
  std::vector<BlockedCalls> blocked_calls;
  std::vector<std::vector<int>> cycles;    ///< closed: {0, 1, 0} is 0 -> 1 -> 0
  std::vector<std::string> culprits;       ///< the culprits section, one finding a line
  std::vector<RankEvents> last_events;     ///< by rank

  bool empty() const { return preamble.empty() && headline.empty(); }
};

/// The analysis as text, without the culprit line.
std::string render_analysis(const FailureAnalysis& analysis);

/// Who waited for whom when a run deadlocked: what `--wait-graph` draws (Graphviz).
struct WaitForGraph {
  struct Node {
    int rank = 0;
    std::string state;  ///< "blocked", "finished", "failed" or "running"
    std::string call;   ///< the blocked operation; empty otherwise
  };
  struct Edge {
    int from = 0;
    int to = 0;
    std::string label;  ///< the call `from` waits in
    bool in_cycle = false;
    bool lost = false;  ///< not a wait: a message from `from` to `to` that a fault dropped
  };
  std::vector<Node> nodes;  ///< the blocked ranks and the ranks they wait for, by rank
  std::vector<Edge> edges;

  bool empty() const { return nodes.empty(); }
};

/// Returned by Cluster::run (and Engine::run); the run itself never throws for a rank's
/// failure, so a dropped report is a failure unseen: [[nodiscard]].
struct [[nodiscard]] RunReport {
  RunStatus status = RunStatus::ok;
  std::vector<RankOutcome> ranks;
  int root_cause_rank = -1;          ///< the rank whose error ended the run, if any
  std::exception_ptr root_cause;     ///< that error, to rethrow in tests
  std::string summary;               ///< one line
  std::string details;               ///< the full report as text: analysis and culprit line
  FailureAnalysis analysis;          ///< the same, section by section
  Culprit culprit;                   ///< the one-line diagnosis; empty kind if ok
  std::vector<std::string> faults;   ///< one line per injected fault: what it did
  WaitForGraph wait_graph;           ///< when ranks were blocked at the end (deadlock)

  bool ok() const { return status == RunStatus::ok; }
  /// Rethrows the root cause (tests use this to fail with the rank's own message).
  void rethrow_if_failed() const;
  /// Sets `details` from `analysis` and `culprit`.
  void render_details();
};

}  // namespace ranklab
