// The built-in scenarios: small rank programs that show what the emulator does, from a
// correct ring to each kind of failure it reports, and a catalogue of bugs that happen in
// real TP/PP/DP training code, each beside its fixed twin (cli/scenarios/).
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/communicator.hpp"
#include "comm/run_report.hpp"

namespace ranklab::cli {

/// What a scenario's ranks may tell the user: lines printed after the run, by rank.
class ScenarioOutput {
 public:
  explicit ScenarioOutput(int world_size) : lines_(static_cast<std::size_t>(world_size)) {}
  void say(int rank, std::string line);
  /// Every line, rank by rank.
  std::vector<std::string> lines() const;

 private:
  mutable std::mutex mutex_;  // ranks may run on several OS threads; never held across a switch
  std::vector<std::vector<std::string>> lines_;
};

/// Knobs a scenario reads from the command line.
struct ScenarioParams {
  std::size_t count = 16;  ///< elements per collective, where the scenario has a payload
};

/// What a scenario's report says when nothing else is changed (default flags, any policy):
/// the tests hold every scenario to it.
struct Expectation {
  RunStatus status = RunStatus::ok;
  CulpritKind culprit = CulpritKind::none;  ///< Culprit::kind; nondeterminism for races explore finds
  std::vector<int> ranks;  ///< ranks the culprit must name (Culprit::ranks)
  /// Passes a single run: only `ranklab explore` finds it (results differ by schedule).
  bool needs_exploration = false;
};

struct Scenario {
  std::string name;
  std::string summary;  ///< one line for `ranklab scenarios`
  int default_world = 4;
  int min_world = 1;
  std::function<void(Communicator&, const ScenarioParams&, ScenarioOutput&)> body;
  /// Catalogue entries run one layout: --world must equal default_world.
  bool fixed_world = false;
  /// Faults the scenario injects itself (a crash or a lost message is a fault, not code),
  /// before any --fault given on the command line.
  std::vector<std::string> faults;
  /// The catalogue: a bug names its fixed twin, a twin its bug; empty for the basics.
  std::string twin;
  bool is_bug = false;
  Expectation expect;
};

/// All scenarios, in the order `ranklab scenarios` lists them: the basics, then the
/// catalogue, each bug followed by its fixed twin.
const std::vector<Scenario>& scenarios();

/// The scenario called `name`; throws UsageError listing the known names otherwise.
const Scenario& find_scenario(std::string_view name);

/// Throws UsageError if `scenario` cannot run on `world` ranks; `given` names where the
/// world came from in the message (`--world 3`, `mpirun -np 3`).
void check_scenario_world(const Scenario& scenario, int world, std::string_view given);

}  // namespace ranklab::cli
