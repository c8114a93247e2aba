// Where a rank program made a Communicator call, as the funnel hands it down to a backend:
// the C++ source location of the call (captured by a defaulted std::source_location
// parameter on every Communicator call) and the model's own name for it (a label set by
// Communicator::annotate, e.g. "TP all_reduce of layer 2 forward"). Pointers only, so
// capturing one costs two stores: the strings are the compiler's static ones and the
// annotation's interned label, which outlive every operation of the run. Turned into the
// trace's CallSite (strings, source root stripped) only when an event is recorded.
#pragma once

#include <cstdint>
#include <source_location>
#include <string>
#include <string_view>

#include "traces/event.hpp"

namespace ranklab {

struct SourceSite {
  const char* file = nullptr;      ///< as the compiler spells it; nullptr: unknown
  std::uint32_t line = 0;
  const char* function = nullptr;  ///< the compiler's full function name
  const std::string* label = nullptr;  ///< the model's name for the call; nullptr: none

  static SourceSite from(const std::source_location& where, const std::string* label) {
    return {where.file_name(), static_cast<std::uint32_t>(where.line()), where.function_name(),
            label};
  }
  bool empty() const { return file == nullptr && function == nullptr && label == nullptr; }
  friend bool operator==(const SourceSite&, const SourceSite&) = default;
};

/// The one copy of `label` for the whole process: a SourceSite points to it, and an
/// operation may be reported after the rank and its Communicator are gone (the final
/// report of an aborted run), so labels are never freed. Distinct labels are few (a model
/// has layers x micro-batches x passes of them), so the table stays small. Thread-safe.
const std::string* intern_label(std::string label);

/// `file` without the build's source root (RANKLAB_SOURCE_ROOT), so traces of one program
/// hold the same path on every machine: "model/pipeline_step.cpp".
std::string_view relative_source_path(std::string_view file);
/// The unqualified name of the function a compiler's full name (GCC's and Clang's
/// __PRETTY_FUNCTION__ style) denotes: "void ranklab::Pipeline::backward(int) const" ->
/// "backward"; a lambda is named for the function it is in.
std::string_view short_function_name(std::string_view function);
/// Assigns `site`'s recorded form to `out` (reusing its strings' capacity).
void assign_call_site(CallSite& out, const SourceSite& site);
inline CallSite to_call_site(const SourceSite& site) {
  CallSite out;
  assign_call_site(out, site);
  return out;
}

}  // namespace ranklab
