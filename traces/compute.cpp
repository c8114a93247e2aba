// Compute work as a list of compute events (format 1.2) or one unlabelled amount (1.1).
#include <utility>

#include "traces/event.hpp"

namespace ranklab {

void ComputeWork::add(ComputeItem item) {
  if (items.empty() && (flops != 0 || seconds != 0)) items = as_items();
  flops += item.flops;
  seconds += item.seconds;
  items.push_back(std::move(item));
}

void ComputeWork::add(const ComputeWork& other) {
  if (other.empty()) return;
  if (items.empty() && other.items.empty()) {  // two unlabelled amounts stay one
    flops += other.flops;
    seconds += other.seconds;
    return;
  }
  for (ComputeItem& item : other.as_items()) add(std::move(item));
}

std::vector<ComputeItem> ComputeWork::as_items() const {
  if (!items.empty()) return items;
  if (flops == 0 && seconds == 0) return {};
  return {ComputeItem{.flops = flops, .seconds = seconds}};
}

}  // namespace ranklab
