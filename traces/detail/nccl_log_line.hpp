// One line of an NCCL debug log (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL), as NCCL
// 2.30.7 prints it, and its vocabulary (nccl.h's datatype and reduction enums in ranklab's
// types). The strings, from NVIDIA/nccl v2.30.7-1:
//   prefix (src/debug.cc)   "%s:%d:%d " hostname, pid, tid, then "[%d] NCCL INFO " cudaDev;
//                           a timestamp (NCCL_DEBUG_TIMESTAMP_FORMAT) or a launcher's own
//                           prefix may come before it
//   init (src/init.cc)      "%s comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %lx
//                           commId 0x%llx - Init COMPLETE" (ncclCommInitRank and kin), or for
//                           ncclCommSplit/Shrink "... busId %lx parent %p childCount %d
//                           color %d key %d - Init COMPLETE" (2.26-2.28: splitCount; 2.21:
//                           "parent %p color %d key %d commId 0x%llx")
//   operation (src/enqueue.cc, ncclEnqueueCheck)
//                           "%s: opCount %lx sendbuff %p recvbuff %p count %zu datatype %d
//                           op %d root %d comm %p [nranks=%d] stream %p", %s the name
//                           collectives.cc gives ("AllReduce", "Send", ...), root the peer
//                           of a Send or Recv
// Any other line (other subsystems, WARN, a program's own output) is not NCCL's record of an
// operation: kind `other`, skipped. Private to traces/.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "traces/types.hpp"

namespace ranklab::detail::nccl {

/// The NCCL version whose strings and enums this reader follows.
inline constexpr std::string_view kNcclVersion = "2.30.7";

/// A malformed init or operation line: the reason, without file and line (the reader adds them).
class LineError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// "Init COMPLETE": a communicator's address in its process, its rank and size, and what
/// tells which communicators of other processes are the same one.
struct InitLine {
  std::uint64_t comm = 0;
  int rank = 0;
  int nranks = 0;
  int cuda_dev = 0;
  std::optional<std::uint64_t> comm_id;     ///< commId (0 is none)
  std::optional<std::uint64_t> parent;      ///< parent of a split
  std::optional<std::int64_t> split_count;  ///< childCount / splitCount of the parent
  std::optional<std::int64_t> color;
};

/// One operation as ncclEnqueueCheck printed it.
struct OpLine {
  std::string_view name;  ///< "AllReduce", "Send", ...
  std::uint64_t op_count = 0;
  std::uint64_t count = 0;
  std::int64_t datatype = 0;
  std::int64_t op = 0;
  std::int64_t root = 0;  ///< the root, or the peer of a Send or Recv
  std::uint64_t comm = 0;
  int nranks = 0;
};

enum class LineKind { other, init, op };

struct ParsedLine {
  LineKind kind = LineKind::other;
  std::string_view process;  ///< "host:pid", who printed it
  InitLine init;
  OpLine op;
};

/// Parses one line (without its newline). Throws LineError for an init or operation line
/// whose fields do not read as NCCL prints them.
ParsedLine parse_line(std::string_view line);

/// An NCCL datatype (nccl.h's ncclDataType_t) in ranklab's types: the element type and how
/// many of them one NCCL element is. Types ranklab has no name for travel as bytes (uint32
/// as 4 x u8), so a uint32 buffer still differs from an int32 one.
struct ElementType {
  DataType dtype = DataType::u8;
  std::uint64_t elements = 1;
  std::string_view name;  ///< nccl.h's name: "ncclBfloat16"
};

/// ncclDataType_t `value` (0 ncclInt8 ... 11 ncclFloat8e5m2), or nothing.
std::optional<ElementType> element_type(std::int64_t value);

/// ncclRedOp_t `value`: 0 sum, 1 prod, 2 max, 3 min, 4 avg; 5 and up are ops the program
/// made with ncclRedOpCreatePreMulSum (a scaled sum): sum. Nothing for a negative value.
std::optional<ReduceOp> reduce_op(std::int64_t value);

/// collectives.cc's operation name ("AllReduce") as ranklab's kind, or nothing for the ones
/// ranklab does not replay (one-sided PutSignal, Signal, WaitSignal).
std::optional<OpKind> op_kind(std::string_view name);

}  // namespace ranklab::detail::nccl
