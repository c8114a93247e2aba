// The catalogue's toy layer and result check (catalogue.hpp).
#include <fmt/format.h>

#include "cli/scenarios/catalogue.hpp"
#include "comm/errors.hpp"

namespace ranklab::cli {

void toy_layer(Communicator& tp, std::vector<float>& x) {
  const auto shards = static_cast<float>(tp.size());
  for (float& v : x) v = (v + 1.0f) / shards;  // this shard's partial sum
  if (tp.size() > 1) tp.all_reduce(std::span(x), {.op = ReduceOp::sum});
}

void expect_all(const std::vector<float>& x, float expected, int rank, const char* what) {
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (x[i] != expected) {
      throw Error(fmt::format("rank {}: {} element {} is {}, expected {}", rank, what, i, x[i],
                              expected));
    }
  }
}

}  // namespace ranklab::cli
