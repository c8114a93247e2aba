// The recorded form (TraceEvent::site) of the SourceSites a run's operations carry: one
// shared CallSite per distinct site of the run, however many events name it. A million
// ranks' events share the few sites of their program instead of holding four strings
// each. Private to emulator/; used under the fabric's lock.
#pragma once

#include <cstddef>
#include <functional>
#include <unordered_map>

#include "comm/call_site.hpp"
#include "traces/call_site_table.hpp"

namespace ranklab::detail {

class RecordedSites {
 public:
  /// `site` as a trace records it (source root stripped, short function name).
  const SiteRef& get(const SourceSite& site) {
    // Consecutive events mostly share a site (an algorithm's messages, one collective
    // completing on every rank): the last one answers without hashing.
    // (The first key, an empty site, answers none, which is right.)
    if (last_key_ == site) return last_;
    auto it = by_source_.find(site);
    if (it == by_source_.end()) it = by_source_.emplace(site, table_.intern(to_call_site(site))).first;
    last_key_ = site;
    last_ = it->second;
    return last_;
  }

 private:
  struct Hash {
    std::size_t operator()(const SourceSite& s) const noexcept {
      // Pointer identity: the compiler's strings and the interned labels are unique per text
      // within a binary, or equal texts meet again in table_.
      std::size_t h = std::hash<const void*>{}(s.file);
      const auto mix = [&h](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
      mix(s.line);
      mix(std::hash<const void*>{}(s.function));
      mix(std::hash<const void*>{}(s.label));
      return h;
    }
  };
  std::unordered_map<SourceSite, SiteRef, Hash> by_source_;
  CallSiteTable table_;
  SourceSite last_key_;
  SiteRef last_;
};

}  // namespace ranklab::detail
