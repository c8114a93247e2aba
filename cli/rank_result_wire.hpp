// A rank's results of the main job as bytes, so that MPI processes can send theirs to rank 0
// for the checks (cli/mpi_train.cpp). Native byte order: every process of a job runs the
// same binary.
#pragma once

#include <string>

#include "model/parallel_step.hpp"

namespace ranklab::cli {

template <typename Scalar>
std::string encode_rank_result(const RankResult<Scalar>& result);

/// Throws Error if `bytes` is not what encode_rank_result wrote.
template <typename Scalar>
RankResult<Scalar> decode_rank_result(const std::string& bytes);

}  // namespace ranklab::cli
