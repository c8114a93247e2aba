#include "traces/call_site_table.hpp"

#include <functional>
#include <string_view>
#include <utility>

namespace ranklab {

std::size_t CallSiteTable::Hash::operator()(const CallSite& site) const noexcept {
  // boost::hash_combine's mixing: sites of one file differ mostly in line and label.
  std::size_t h = std::hash<std::string_view>{}(site.file);
  const auto mix = [&h](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  mix(site.line);
  mix(std::hash<std::string_view>{}(site.function));
  mix(std::hash<std::string_view>{}(site.label));
  return h;
}

SiteRef CallSiteTable::intern(CallSite site) {
  if (site.empty()) return {};
  if (const auto it = sites_.find(site); it != sites_.end()) return it->second;
  SiteRef shared(std::make_shared<const CallSite>(site));
  sites_.emplace(std::move(site), shared);
  return shared;
}

}  // namespace ranklab
