#include "comm/call_site.hpp"

#include <mutex>
#include <unordered_set>

namespace ranklab {

const std::string* intern_label(std::string label) {
  static std::mutex mutex;
  static auto* labels = new std::unordered_set<std::string>();  // never freed: see the header
  const std::lock_guard lock(mutex);
  return &*labels->insert(std::move(label)).first;
}

std::string_view relative_source_path(std::string_view file) {
  // Both end with '/' (comm/CMakeLists.txt); the second is "../" for a build inside the tree.
  constexpr std::string_view root = RANKLAB_SOURCE_ROOT;
  constexpr std::string_view from_build = RANKLAB_SOURCE_FROM_BUILD;
  if (file.starts_with(root)) {
    file.remove_prefix(root.size());
  } else if (from_build != "/" && file.starts_with(from_build)) {
    file.remove_prefix(from_build.size());
  }
  return file;
}

std::string_view short_function_name(std::string_view function) {
  // The name ends at the parameter list: the first '(' outside template arguments, unless it
  // belongs to `operator()`. Everything after it (a lambda's own name, cv-qualifiers, GCC's
  // "[with T = ...]") is dropped.
  int depth = 0;
  std::size_t end = function.size();
  for (std::size_t i = 0; i < function.size(); ++i) {
    const char c = function[i];
    if (c == '<') {
      if (function.substr(0, i).ends_with("operator")) continue;  // operator<, operator<<
      ++depth;
    } else if (c == '>' && depth > 0) {
      --depth;
    } else if (c == '(' && depth == 0) {
      if (function.substr(i).starts_with("(anonymous namespace)")) {  // Clang's spelling
        i += std::string_view("(anonymous namespace)").size() - 1;
        continue;
      }
      if (function.substr(0, i).ends_with("operator") && function.substr(i).starts_with("()")) {
        ++i;
        continue;
      }
      end = i;
      break;
    }
  }
  std::string_view name = function.substr(0, end);
  // Drop template arguments at the end, then the return type and the qualifiers.
  if (name.ends_with('>')) {
    int nested = 0;
    for (std::size_t i = name.size(); i-- > 0;) {
      if (name[i] == '>') ++nested;
      if (name[i] == '<' && --nested == 0) {
        name = name.substr(0, i);
        break;
      }
    }
  }
  if (const auto space = name.rfind(' '); space != std::string_view::npos &&
                                          !name.substr(0, space).ends_with("operator")) {
    name.remove_prefix(space + 1);
  }
  if (const auto scope = name.rfind("::"); scope != std::string_view::npos) {
    name.remove_prefix(scope + 2);
  }
  return name.empty() ? function : name;
}

void assign_call_site(CallSite& out, const SourceSite& site) {
  if (site.file != nullptr) {
    out.file.assign(relative_source_path(site.file));
  } else {
    out.file.clear();
  }
  out.line = site.line;
  if (site.function != nullptr) {
    out.function.assign(short_function_name(site.function));
  } else {
    out.function.clear();
  }
  if (site.label != nullptr) {
    out.label.assign(*site.label);
  } else {
    out.label.clear();
  }
}

}  // namespace ranklab
