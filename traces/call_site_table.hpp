// One copy of each distinct call site: what a trace's events share (TraceEvent::site).
// A reader or a run owns one table; events keep their sites alive after it is gone.
#pragma once

#include <cstddef>
#include <unordered_map>

#include "traces/event.hpp"

namespace ranklab {

class CallSiteTable {
 public:
  /// The shared copy of `site` (made on first sight); none for an empty site. Not
  /// thread-safe: each owner calls it under its own lock, or from one thread.
  SiteRef intern(CallSite site);
  /// Distinct non-empty sites seen so far.
  std::size_t size() const { return sites_.size(); }

 private:
  struct Hash {
    std::size_t operator()(const CallSite& site) const noexcept;
  };
  std::unordered_map<CallSite, SiteRef, Hash> sites_;
};

}  // namespace ranklab
