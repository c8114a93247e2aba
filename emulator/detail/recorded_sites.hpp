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
  /// `site` as a trace records it (source root stripped, short function name). The
  /// reference stays valid, and the same for the same site, as long as this table.
  const SiteRef& get(const SourceSite& site) {
    // Consecutive events mostly share a site (an algorithm's messages, one collective
    // completing on every rank): the last one answers without a lookup.
    // (The first key, an empty site, answers none, which is right.)
    if (last_key_ == site) [[likely]] return *last_;
    return look_up(site);
  }

  RecordedSites() = default;
  RecordedSites(const RecordedSites&) = delete;  // last_ points into by_source_ (or none_)
  RecordedSites& operator=(const RecordedSites&) = delete;

 private:
  /// get() of a site other than the last one: out of line, off get()'s inlined path.
  [[gnu::noinline]] const SiteRef& look_up(const SourceSite& site) {
    auto it = by_source_.find(site);
    if (it == by_source_.end()) {
      it = by_source_.emplace(site, table_.intern(to_call_site(site))).first;
    }
    last_key_ = site;
    last_ = &it->second;  // map nodes do not move
    return *last_;
  }

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
  SiteRef none_;  ///< what an empty site records
  SourceSite last_key_;
  const SiteRef* last_ = &none_;
};

}  // namespace ranklab::detail
