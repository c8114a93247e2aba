// The recorded form (TraceEvent::site) of the SourceSites a run's operations carry: one
// shared CallSite per distinct site of the run, however many events name it. A million
// ranks' events share the few sites of their program instead of holding four strings
// each. Private to emulator/; used under the fabric's lock.
#pragma once

#include <functional>
#include <map>

#include "comm/call_site.hpp"
#include "traces/call_site_table.hpp"

namespace ranklab::detail {

class RecordedSites {
 public:
  /// `site` as a trace records it (source root stripped, short function name).
  const SiteRef& get(const SourceSite& site) {
    // Consecutive events mostly share a site (an algorithm's messages, one collective
    // completing on every rank): the last one answers without a lookup.
    // (The first key, an empty site, answers none, which is right.)
    if (last_key_ == site) return last_;
    auto it = by_source_.find(site);
    if (it == by_source_.end()) {
      it = by_source_.emplace(site, table_.intern(to_call_site(site))).first;
    }
    last_key_ = site;
    last_ = it->second;
    return last_;
  }

 private:
  /// Pointer identity: the compiler's strings and the interned labels; equal texts at two
  /// addresses meet again in table_.
  struct Less {
    bool operator()(const SourceSite& a, const SourceSite& b) const noexcept {
      const std::less<const void*> before;
      if (a.file != b.file) return before(a.file, b.file);
      if (a.line != b.line) return a.line < b.line;
      if (a.function != b.function) return before(a.function, b.function);
      return before(a.label, b.label);
    }
  };
  std::map<SourceSite, SiteRef, Less> by_source_;
  CallSiteTable table_;
  SourceSite last_key_;
  SiteRef last_;
};

}  // namespace ranklab::detail
