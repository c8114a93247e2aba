// The registry of built-in scenarios and what their ranks say.
#include <fmt/format.h>

#include "cli/scenarios/catalogue.hpp"
#include "comm/errors.hpp"

namespace ranklab::cli {

void ScenarioOutput::say(int rank, std::string line) {
  std::lock_guard<std::mutex> lock(mutex_);
  lines_[static_cast<std::size_t>(rank)].push_back(std::move(line));
}

std::vector<std::string> ScenarioOutput::lines() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> out;
  for (const auto& rank_lines : lines_) out.insert(out.end(), rank_lines.begin(), rank_lines.end());
  return out;
}

const std::vector<Scenario>& scenarios() {
  static const std::vector<Scenario> all = [] {
    std::vector<Scenario> list = basic_scenarios();
    for (auto part : {pipeline_scenarios(), group_scenarios(), data_parallel_scenarios()}) {
      list.insert(list.end(), std::make_move_iterator(part.begin()),
                  std::make_move_iterator(part.end()));
    }
    return list;
  }();
  return all;
}

const Scenario& find_scenario(std::string_view name) {
  std::string known;
  for (const auto& s : scenarios()) {
    if (s.name == name) return s;
    known += known.empty() ? "" : ", ";
    known += s.name;
  }
  throw UsageError(fmt::format("unknown scenario '{}' (known: {})", name, known));
}

}  // namespace ranklab::cli
