#include "model/sequence_parallel.hpp"

#include <fmt/format.h>

#include <memory>
#include <utility>

#include "model/device.hpp"
#include "traces/error.hpp"

namespace ranklab {

namespace {

void check_rows(const SequenceSplit& split, std::int64_t rows) {
  if (split.tp <= 0 || split.seq % split.tp != 0 || rows % split.seq != 0) {
    throw UsageError(
        fmt::format("sequence parallelism: {} rows of sequence length {} do not split among TP={}",
                    rows, split.seq, split.tp));
  }
}

// Block t of the result holds rank t's shard: rows (b, t·S/TP + s') for every sample b.
template <typename Scalar>
void to_rank_major(ConstMatrixRef<Scalar> full, const SequenceSplit& split, Matrix<Scalar>& out) {
  check_rows(split, full.rows());
  const std::int64_t samples = full.rows() / split.seq;
  const std::int64_t part = split.seq / split.tp;
  out.resize(full.rows(), full.cols());
  for (int t = 0; t < split.tp; ++t) {
    for (std::int64_t b = 0; b < samples; ++b) {
      out.middleRows((t * samples + b) * part, part) =
          full.middleRows(b * split.seq + t * part, part);
    }
  }
}

// The inverse of to_rank_major.
template <typename Scalar>
void from_rank_major(ConstMatrixRef<Scalar> blocks, const SequenceSplit& split,
                     Matrix<Scalar>& full) {
  check_rows(split, blocks.rows());
  const std::int64_t samples = blocks.rows() / split.seq;
  const std::int64_t part = split.seq / split.tp;
  full.resize(blocks.rows(), blocks.cols());
  for (int t = 0; t < split.tp; ++t) {
    for (std::int64_t b = 0; b < samples; ++b) {
      full.middleRows(b * split.seq + t * part, part) =
          blocks.middleRows((t * samples + b) * part, part);
    }
  }
}

}  // namespace

template <typename Scalar>
Matrix<Scalar> sequence_shard(ConstMatrixRef<Scalar> full, const SequenceSplit& split, int t) {
  Matrix<Scalar> blocks;
  to_rank_major<Scalar>(full, split, blocks);
  const std::int64_t rows = split.shard_rows(full.rows());
  return blocks.middleRows(t * rows, rows);
}

template <typename Scalar>
void all_gather_sequence(Communicator& tp, const SequenceSplit& split, ConstMatrixRef<Scalar> shard,
                         Matrix<Scalar>& full, const DeviceMemory* device,
                         Communicator::Where where) {
  if (tp.size() == 1) {
    full = shard;
    return;
  }
  Matrix<Scalar> blocks(shard.rows() * tp.size(), shard.cols());
  const Matrix<Scalar> input = shard;  // contiguous, and `full` may alias `shard`
  tp.all_gather(device_buffer(input, device), device_buffer(blocks, device), {}, where);
  from_rank_major<Scalar>(blocks, split, full);
}

template <typename Scalar>
void reduce_scatter_sequence(Communicator& tp, const SequenceSplit& split, Matrix<Scalar>& values,
                             const DeviceMemory* device, Communicator::Where where) {
  if (tp.size() == 1) return;
  Matrix<Scalar> blocks;
  to_rank_major<Scalar>(values, split, blocks);
  values.resize(split.shard_rows(blocks.rows()), blocks.cols());
  const Matrix<Scalar>& input = blocks;
  tp.reduce_scatter(device_buffer(input, device), device_buffer(values, device),
                    {.op = ReduceOp::sum}, where);
}

template <typename Scalar>
StackHooks<Scalar> sequence_parallel_hooks(Communicator& tp, const SequenceSplit& split,
                                           const DeviceMemory* device) {
  if (tp.size() == 1) return {};
  const auto gather = [&tp, split, device](Matrix<Scalar>& values, Communicator::Where where) {
    all_gather_sequence<Scalar>(tp, split, values, values, device, where);
  };
  const auto scatter = [&tp, split, device](Matrix<Scalar>& values, Communicator::Where where) {
    reduce_scatter_sequence<Scalar>(tp, split, values, device, where);
  };
  return {.reduce_output = scatter,
          .reduce_input_grad = scatter,
          .gather_input = gather,
          .gather_output_grad = gather};
}

#define RANKLAB_INSTANTIATE_SP(Scalar)                                                         \
  template Matrix<Scalar> sequence_shard<Scalar>(ConstMatrixRef<Scalar>, const SequenceSplit&, \
                                                 int);                                         \
  template void all_gather_sequence<Scalar>(Communicator&, const SequenceSplit&,               \
                                            ConstMatrixRef<Scalar>, Matrix<Scalar>&,           \
                                            const DeviceMemory*, Communicator::Where);         \
  template void reduce_scatter_sequence<Scalar>(Communicator&, const SequenceSplit&,           \
                                                Matrix<Scalar>&, const DeviceMemory*,          \
                                                Communicator::Where);                          \
  template StackHooks<Scalar> sequence_parallel_hooks<Scalar>(Communicator&, const SequenceSplit&, \
                                                              const DeviceMemory*);

RANKLAB_INSTANTIATE_SP(float)
RANKLAB_INSTANTIATE_SP(double)

#undef RANKLAB_INSTANTIATE_SP

}  // namespace ranklab
