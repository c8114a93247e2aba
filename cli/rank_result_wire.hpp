// A rank's results of the main job as bytes, so that every launcher hands them to the
// reporting process for the checks (cli/train_command.cpp): MPI processes send theirs to
// rank 0. Native byte order (cli/wire.hpp): every process of a job runs the same binary.
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
