// The MPI tests' main: every process runs the whole GoogleTest suite as one rank of the
// job. Rank 0 prints the usual report; the others print only their failures, prefixed with
// their rank. Every process exits with the job's verdict (1 if any rank failed).
//
// A test must make every rank run the same communicator calls whatever it finds (EXPECT,
// never ASSERT, before a call that others make), or a failure would hang the job.
#include <mpi.h>

#include <gtest/gtest.h>

#include "collectives/mpi/mpi_session.hpp"
#include "tests/mpi/mpi_test_support.hpp"

namespace {

// Prints failed assertions with the rank, for the ranks whose report is silenced.
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: failure\n%s\n", rank_,
                 result.file_name() ? result.file_name() : "?", result.line_number(),
                 result.summary());
  }

 private:
  int rank_;
};

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ranklab::MpiSession session(argc, argv);
  ranklab::testing::set_session(session);
  if (session.rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter(session.rank()));
  }
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return failed;
}
