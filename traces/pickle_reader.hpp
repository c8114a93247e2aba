// A reader for the small subset of Python's pickle format that PyTorch Flight Recorder
// dumps are written in, to JSON values. It never runs code: pickle is a stack machine whose
// opcodes can import and call anything (GLOBAL, REDUCE, BUILD), and this reader implements
// only the opcodes that build plain data, refusing every other one.
//
// Accepted (protocols 2 to 5; what torch's C++ pickler and Python's pickle.dump write for a
// dict of str, int, float, bool, None, list, tuple and dict):
//   PROTO FRAME STOP MARK POP
//   NONE NEWTRUE NEWFALSE BININT BININT1 BININT2 LONG1 (up to 8 bytes) BINFLOAT
//   BINUNICODE SHORT_BINUNICODE BINUNICODE8
//   EMPTY_TUPLE TUPLE TUPLE1 TUPLE2 TUPLE3 EMPTY_LIST APPEND APPENDS LIST
//   EMPTY_DICT SETITEM SETITEMS DICT
//   BINPUT LONG_BINPUT MEMOIZE BINGET LONG_BINGET          (the memo: shared values)
//   GLOBAL + REDUCE only for torch's list builders (torch.jit._pickle build_intlist,
//   build_doublelist, build_boollist, build_stringlist, restore_type_tag), which return their
//   argument: a list (or the tagged value) as it is.
// Values: dict -> object (keys str, or int written in decimal), list and tuple -> array,
// str -> string (UTF-8), int -> integer (int64), float -> number, bool, None -> null.
//
// Bounds: every length is checked against the bytes left; the values built are never more
// than the opcodes read; nesting is at most kMaxPickleDepth; a value that the memo repeats
// may be expanded into at most kMaxPickleValues JSON values in all. Anything else is a
// TraceError "NAME: offset N: reason", N the byte offset of the opcode at fault
// ("unsupported pickle opcode 0x52" for what is refused).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string_view>

namespace ranklab {

inline constexpr std::size_t kMaxPickleDepth = 64;
inline constexpr std::size_t kMaxPickleValues = std::size_t{1} << 22;

/// The value a pickle holds. `name` is what errors call the input (its file name).
/// Throws TraceError on anything outside the subset above, or a truncated pickle.
nlohmann::json read_pickle(std::string_view bytes, std::string_view name);

}  // namespace ranklab
