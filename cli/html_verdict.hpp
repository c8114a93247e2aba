// The verdict `ranklab export --html` puts first on the page: the trace replayed as
// `ranklab replay TRACE` replays it (its defaults: rank order, one thread, rendezvous sends),
// so the page and the text report blame the same thing in the same words.
#pragma once

#include <string>

#include "traces/event.hpp"
#include "traces/export_html.hpp"

namespace ranklab::cli {

/// Replays `trace` and returns its verdict; `replay_args` are what `ranklab replay` would
/// take for the same input ("--format pytorch-fr dumps/"), for the note. A trace the replay
/// refuses (a buffer over the memory limit, ...) gets an empty status and the reason in
/// the note: the page is still written.
HtmlVerdict diagnose_for_html(const Trace& trace, const std::string& replay_args);

}  // namespace ranklab::cli
