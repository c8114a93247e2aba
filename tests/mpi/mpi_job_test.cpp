// How a failing MPI job ends (mpi_job_test.sh runs it): one rank program per case, run with
// run_on_mpi as `ranklab run --backend mpi` runs its programs. The job must end with the
// emulator's exit code and its report printed by rank 0, whichever process found the failure.
// Before the run, rank 0 prints "emulator: " and the culprit line the emulator gives for the
// same program (and "emulator table: " and each line of a collective mismatch's table), for
// the script to compare.
//
//   mpi_job_test CASE [TIMEOUT_MS [ALGO]]   TIMEOUT_MS: MpiOptions::timeout, 60000 by default;
//                                           ALGO: direct (default) or mpi (MPI's collectives)
#include <chrono>
#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "collectives/cluster.hpp"
#include "collectives/mpi/mpi_run.hpp"
#include "tests/support/skip_all_reduce.hpp"

namespace {

using ranklab::Communicator;
using Program = std::function<void(Communicator&)>;

struct Case {
  int world;
  Program program;
};

// A float sent into a double buffer of the same bytes: rank 1 finds it, rank 0 has finished.
void dtype_message(Communicator& comm) {
  std::vector<float> floats(4, 1.0f);
  std::vector<double> doubles(2);
  if (comm.rank() == 0) comm.send(std::span<const float>(floats), 1, 7);
  if (comm.rank() == 1) comm.recv(std::span(doubles), 0, 7);
}

// Rank 2 finds the mismatch of rank 1's message while rank 0 waits for a message that never
// comes: rank 0 learns of it in its wait.
void mismatch_while_rank0_waits(Communicator& comm) {
  std::vector<float> floats(4, 1.0f);
  std::vector<std::int32_t> ints(4);
  if (comm.rank() == 0) comm.recv(std::span(ints), 1, 9);
  if (comm.rank() == 1) comm.send(std::span<const float>(floats), 2, 7);
  if (comm.rank() == 2) comm.recv(std::span(ints), 1, 7);
}

// Rank 2 finds the mismatch of rank 1's message while rank 0 is inside an all_reduce with
// rank 1, which waits for rank 2: with MPI's own collectives and no timeout, rank 0 blocks in
// MPI_Allreduce, which never returns to ranklab to learn of the report.
void mismatch_while_rank0_in_mpi(Communicator& comm) {
  std::vector<float> floats(4, 1.0f);
  std::vector<std::int32_t> ints(4);
  const std::vector<int> members = {0, 1};
  Communicator pair = comm.new_group(members, "pair");
  if (comm.rank() == 0) pair.all_reduce(std::span(floats));
  if (comm.rank() == 1) {
    comm.send(std::span<const float>(floats), 2, 7);
    comm.recv(std::span(ints), 2, 8);
  }
  if (comm.rank() == 2) comm.recv(std::span(ints), 1, 7);
}

// Ranks 2 and 3 disagree on an all_reduce of their own group; ranks 0 and 1, not members,
// wait in a barrier the others never reach.
void subgroup_mismatch(Communicator& comm) {
  const std::vector<int> members = {2, 3};
  Communicator pair = comm.new_group(members, "pair");
  if (comm.rank() >= 2) {
    std::vector<float> data(comm.rank() == 3 ? 5 : 4, 1.0f);
    pair.all_reduce(std::span(data));
  }
  comm.barrier();
}

// Rank 2 throws while the others wait in an all_reduce.
void rank_throws(Communicator& comm) {
  if (comm.rank() == 2) throw std::runtime_error("rank 2 gives up");
  std::vector<float> data(4, 1.0f);
  comm.all_reduce(std::span(data));
}

const std::map<std::string, Case>& cases() {
  static const std::map<std::string, Case> all = {
      {"dtype-message", {2, dtype_message}},
      {"mismatch-while-rank0-waits", {3, mismatch_while_rank0_waits}},
      {"mismatch-while-rank0-in-mpi", {3, mismatch_while_rank0_in_mpi}},
      {"subgroup-mismatch", {4, subgroup_mismatch}},
      // Every member's call is exchanged: rank 0 is blamed, 1 rank against 3, as on the
      // emulator.
      {"skip-all-reduce", {4, ranklab::testing::skip_all_reduce}},
      {"rank-throws", {3, rank_throws}},
  };
  return all;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string name = argc > 1 ? argv[1] : "";
  const auto it = cases().find(name);
  if (it == cases().end()) {
    std::fprintf(stderr, "mpi_job_test: unknown case '%s'\n", name.c_str());
    return 1;
  }
  const long timeout_ms = argc > 2 ? std::atol(argv[2]) : 60000;
  const bool library = argc > 3 && std::string(argv[3]) == "mpi";
  ranklab::MpiSession session(argc, argv,
                              {.library_collectives = library,
                               .check_collectives = !library,
                               .timeout = std::chrono::milliseconds(timeout_ms)});
  if (session.size() != it->second.world) {
    if (session.rank() == 0) std::fprintf(stderr, "mpi_job_test %s needs -np %d\n", name.c_str(), it->second.world);
    return 1;
  }
  if (session.rank() == 0) {
    ranklab::Cluster cluster({.world_size = it->second.world});
    const ranklab::RunReport report = cluster.run(it->second.program);
    std::printf("emulator: exit %d %s\n", ranklab::exit_code(report.status),
                ranklab::culprit_line(report.culprit).c_str());
    // A collective mismatch's table, line by line, for the script to compare.
    if (report.culprit.kind == ranklab::CulpritKind::collective_mismatch) {
      std::size_t from = 0;
      while (from < report.details.size()) {
        const std::size_t to = std::min(report.details.find('\n', from), report.details.size());
        std::printf("emulator table: %s\n", report.details.substr(from, to - from).c_str());
        from = to + 1;
      }
    }
    std::fflush(stdout);
  }
  const ranklab::MpiRun run = ranklab::run_on_mpi(session, {}, it->second.program);
  if (session.rank() == 0) std::printf("result: %s\n", run.report.summary.c_str());
  return ranklab::exit_code(run.report.status);
}
