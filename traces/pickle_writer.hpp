// A writer of plain data as a Python pickle (protocol 2, as torch's C++ pickler writes a
// Flight Recorder dump on timeout), the inverse of traces/pickle_reader.hpp's subset, so
// `ranklab export --flight-recorder` writes dumps that `pickle.load` (and with it PyTorch's
// analyzer, torch.distributed.flight_recorder) reads.
//
// Values: object -> dict (str keys, in the object's order), array -> list (or tuple, for
// the keys named in `tuple_keys`: torch writes an entry's process_group as a tuple),
// string -> str, integer -> int (BININT1/BININT2/BININT, LONG1 beyond 32 bits), number ->
// float (BINFLOAT), bool -> NEWTRUE/NEWFALSE, null -> None. No memo, no GLOBAL: the pickle
// builds data and nothing else, whoever loads it. torch's own pickler also wraps each typed
// dict and list in torch.jit._pickle.restore_type_tag (a GLOBAL and a REDUCE that return the
// value unchanged); that wrapping is left out, so loading needs no torch and `pickle.load`
// gives the same dicts and lists.
#pragma once

#include <nlohmann/json.hpp>
#include <set>
#include <string>

namespace ranklab {

struct PickleWriteOptions {
  /// Object keys whose array values are written as tuples (at any depth).
  std::set<std::string> tuple_keys;
};

/// The pickle of `value`. Throws TraceError for a string that is not UTF-8 (Python's str
/// holds text) or a value nested deeper than kMaxPickleDepth (the reader's bound).
std::string write_pickle(const nlohmann::ordered_json& value, const PickleWriteOptions& options = {});

}  // namespace ranklab
