// Which point-to-point algorithm implements which collective, and how a call picks one.
#include <cstdint>
#include <cstring>

#include "collectives/algorithms/algorithm.hpp"
#include "collectives/algorithms/registry.hpp"
#include "comm/errors.hpp"

namespace ranklab {
namespace {

// The implementation of `op` in `algorithm`'s row, or null.
const AlgorithmImplementation* find_implementation(Algorithm algorithm, OpKind op) {
  for (const AlgorithmRow& row : algorithm_rows()) {
    if (row.algorithm != algorithm) continue;
    for (const AlgorithmImplementation& impl : row.implements) {
      if (impl.run != nullptr && impl.op == op) return &impl;
    }
  }
  return nullptr;
}

// `all_reduce, all_gather`: what an algorithm implements, for error messages.
std::string implemented_by(Algorithm algorithm) {
  std::string out;
  for (const AlgorithmRow& row : algorithm_rows()) {
    if (row.algorithm != algorithm) continue;
    for (const AlgorithmImplementation& impl : row.implements) {
      if (impl.run == nullptr) continue;
      out += out.empty() ? "" : ", ";
      out += to_string(impl.op);
    }
  }
  return out;
}

}  // namespace

bool implements(Algorithm algorithm, OpKind op) {
  if (is_point_to_point(op)) return false;
  return algorithm == Algorithm::direct || find_implementation(algorithm, op) != nullptr;
}

Algorithm resolve_algorithm(OpKind op, Algorithm requested, Algorithm fallback, int group_size) {
  if (requested != Algorithm::automatic) {
    RANKLAB_CHECK(implements(requested, op),
                  "algorithm {} does not implement {} (it implements {})", to_string(requested),
                  to_string(op), implemented_by(requested));
    return group_size == 1 ? Algorithm::direct : requested;
  }
  if (group_size == 1 || !implements(fallback, op)) return Algorithm::direct;
  return fallback;
}

void run_p2p_algorithm(Backend& backend, Algorithm algorithm, const CollectiveArgs& args, int tag) {
  const AlgorithmImplementation* impl = find_implementation(algorithm, args.op);
  RANKLAB_CHECK(impl != nullptr, "algorithm {} does not implement {}", to_string(algorithm),
                to_string(args.op));
  const CollectiveSignature sig = make_signature(args, backend.size(), backend.rank());
  // Nothing to move: the fingerprint, posted already, has ordered the call.
  if (sig.count == 0 && args.op != OpKind::barrier) return;
  PeerLink link(
      backend, tag, sig.dtype, args.reduce_op,
      fmt::format("{} via {} in {}", to_string(args.op), to_string(algorithm), backend.name()));
  impl->run(link, args);
}

void copy_to_output(const CollectiveArgs& args, std::size_t count) {
  if (args.input.data == args.output.data || count == 0) return;
  std::memmove(args.output.data, args.input.data, count * size_of(args.output.dtype));
}

bool overlaps(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes) {
  if (a_bytes == 0 || b_bytes == 0) return false;
  const auto x = reinterpret_cast<std::uintptr_t>(a);
  const auto y = reinterpret_cast<std::uintptr_t>(b);
  return x < y + b_bytes && y < x + a_bytes;
}

}  // namespace ranklab
