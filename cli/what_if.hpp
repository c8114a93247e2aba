// `ranklab replay TRACE --what-if SPEC`: the recording replayed as it would have gone with
// one thing changed.
// - `slow:R=xF`: rank R's compute F times slower (needs --cost or --topology). The trace is
//   timed again with receives from any source matched in virtual arrival order under the
//   replay's send mode (VirtualTimeOptions::rematch_any_source): the predicted step time,
//   who waits for whom, and whether the job still completes (R is a straggler) or now hangs
//   (a latent bug: a receive took another sender's message, a send found no receive).
// - `skip:R@OP`: rank R never issues its operation OP (the `op #` reports print); the
//   replay then gives the report of that run: the hang or mismatch it causes, blamed on R.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "emulator/options.hpp"
#include "traces/cost_model.hpp"
#include "traces/event.hpp"
#include "traces/virtual_time.hpp"

namespace ranklab::cli {

struct WhatIf {
  enum class Kind { slow, skip };
  Kind kind = Kind::slow;
  int rank = 0;
  double factor = 1;     ///< slow
  std::uint64_t op = 0;  ///< skip: the rank's op # (rank_seq)
  std::string text;      ///< as given
};

/// Parses "slow:R=xF" or "skip:R@OP"; throws UsageError naming what is wrong.
WhatIf parse_what_if(std::string_view text);

/// `trace` without rank `what.rank`'s operation `what.op` (later operations of the rank no
/// longer wait on it); throws UsageError if the rank or the operation is not there.
Trace skip_operation(const Trace& trace, const WhatIf& what);

/// A slow what-if, predicted.
struct SlowPrediction {
  VirtualTimes baseline;   ///< the recording under `model`, as recorded
  VirtualTimes predicted;  ///< with the rank slowed, receives matched as they arrive
  CostModel model;         ///< with the rank slowed
  std::size_t any_source_receives = 0;
};

/// Times `trace` with `what`'s rank slowed; throws UsageError without a cost model or for a
/// rank outside the trace.
SlowPrediction predict_slow(const Trace& trace, const WhatIf& what,
                            const std::optional<CostModel>& cost, const SendMode& send_mode);

/// The prediction as a report section, ending in its `outcome:` line.
std::string format_slow_prediction(const SlowPrediction& p, const WhatIf& what, const Trace& trace);
nlohmann::json slow_prediction_to_json(const SlowPrediction& p, const WhatIf& what,
                                       const Trace& trace);

/// "rank 3 skips all_reduce #2 of world (op #2)".
std::string describe_skip(const Trace& trace, const WhatIf& what);

}  // namespace ranklab::cli
