// The built-in scenarios: small rank programs that show what the emulator does, from a
// correct ring to each kind of failure it reports.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/communicator.hpp"

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

struct Scenario {
  std::string name;
  std::string summary;  ///< one line for `ranklab scenarios`
  int default_world = 4;
  int min_world = 1;
  std::function<void(Communicator&, const ScenarioParams&, ScenarioOutput&)> body;
};

/// All scenarios, in the order `ranklab scenarios` lists them.
const std::vector<Scenario>& scenarios();

/// The scenario called `name`; throws UsageError listing the known names otherwise.
const Scenario& find_scenario(std::string_view name);

}  // namespace ranklab::cli
