// `ranklab run` with no --scenario: the main job, the seed's training step (issue 3 §5).
// By default TP2 PP2 DP2 on 8 ranks, B8 S16 H32 I64 L4, float32: every rank runs one step
// of model/parallel_step.hpp on the emulator, is checked against the dense reference (and
// PyTorch's per-rank gradients with --init-from), and the traffic per group kind is counted
// from the trace, which is written to traces/main.jsonl.
#pragma once

#include <functional>

#include <memory>
#include <optional>
#include <string>

#include "cli/cluster_flags.hpp"
#include "cli/cost_flags.hpp"
#include "cli/train_flags.hpp"
#include "cli/train_report.hpp"

namespace ranklab {
class Launcher;
}

namespace ranklab::cli {

/// The trace the main job writes unless --trace names another file.
inline constexpr const char* kMainTrace = "traces/main.jsonl";

/// Resolves the flags (and, with --init-from, the golden set's manifest) into a job.
/// `world` is --world, which must then equal TP*PP*DP. Throws UsageError with one line for
/// a bad mode, order or dtype, a layout that does not split the model, or a flag that
/// contradicts the golden set.
TrainSpec resolve_train_spec(const TrainFlags& flags, std::optional<int> world);

/// One run of the main job.
struct TrainRun {
  TrainReport report;  ///< checks filled in when the run succeeded; no trace_path yet
  RunReport run;       ///< the cluster's own report
  Trace trace;
  std::string results;  ///< a hash of every rank's output, loss and gradients, bit for bit
};

/// What a run of the main job needs besides its launcher: how the report names the cluster,
/// what the cost model times the trace under, whether the passes are drawn.
struct TrainLaunch {
  std::string cluster;  ///< the report's cluster line
  SendMode send_mode;   ///< the cost model's (--send-mode)
  /// A long run shows its passes on stderr when it is a terminal (cli/train_progress.hpp).
  bool progress = false;
  /// Called with the report as it stands before the ranks run (the job's layout, schedule
  /// and cluster, no results): the MPI backend prints a job that ends in MPI_Abort from it.
  std::function<void(const TrainReport&)> before_run;
};

/// The main job prepared once (flags resolved, data loaded, dense reference computed) and
/// run as often as needed: once by `ranklab run`, once per schedule by `ranklab explore`.
class TrainJob {
 public:
  /// Throws UsageError for bad flags, as resolve_train_spec and to_cost_model do. With a
  /// cost model, every run's trace is timed under it (TrainReport::virtual_time).
  TrainJob(const ClusterFlags& cluster, const TrainFlags& flags, std::optional<int> world,
           const CostFlags& cost = {});
  ~TrainJob();
  TrainJob(const TrainJob&) = delete;
  TrainJob& operator=(const TrainJob&) = delete;

  const TrainSpec& spec() const { return impl_->spec(); }
  /// The cluster options the flags give; a caller may change the policy and add a log.
  const ClusterOptions& options() const { return impl_->options(); }
  /// Runs the job's steps on `launcher`, whose world must be the layout's, and checks them:
  /// the same rank program on every launcher, each rank's results and per-step checks
  /// gathered to the reporting process. Writes no file (but --save's). Where the launcher
  /// does not report from this process (MPI ranks other than 0), the TrainRun holds only
  /// `run`. Safe to call from several threads at once, each with its own launcher.
  TrainRun run(Launcher& launcher, const TrainLaunch& launch) const {
    return impl_->run(launcher, launch);
  }
  /// The same on a fresh emulated cluster with `options`. `progress`: as TrainLaunch's;
  /// explore, which runs many, draws none.
  TrainRun run(ClusterOptions options, bool progress = false) const;

  /// The float or double job behind the interface.
  class Impl {
   public:
    Impl(TrainSpec spec, const ClusterFlags& flags, std::optional<CostModel> cost);
    virtual ~Impl() = default;
    virtual TrainRun run(Launcher& launcher, const TrainLaunch& launch) const = 0;
    const TrainSpec& spec() const { return spec_; }
    const ClusterOptions& options() const { return options_; }
    Algorithm algorithm() const { return algorithm_; }

   protected:
    TrainSpec spec_;
    ClusterOptions options_;
    Algorithm algorithm_;
    std::optional<CostModel> cost_;
  };

 private:
  std::unique_ptr<Impl> impl_;
};

/// Runs the main job and prints its report (text, or JSON with --json); returns the exit
/// code (DESIGN.md §7: 0 ok, 2 a check failed, 3-5 the run failed). `world` is --world if
/// given; with `cost` naming a model the trace is also timed under it. Throws UsageError
/// for bad flags before any rank starts.
int train_command(const ClusterFlags& cluster, const TrainFlags& flags, std::optional<int> world,
                  const CostFlags& cost = {});

}  // namespace ranklab::cli
