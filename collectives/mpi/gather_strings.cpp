#include "collectives/mpi/detail/gather_strings.hpp"

#include "collectives/mpi/detail/mpi_call.hpp"

namespace ranklab::mpi_detail {
namespace {

// Where each of texts of `lengths` starts when they are packed one after another; `total`
// gets their sum.
std::vector<int> packed_displacements(const std::vector<int>& lengths, std::size_t& total) {
  std::vector<int> displs(lengths.size());
  total = 0;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    displs[i] = mpi_count(total, "the texts of the job");
    total += static_cast<std::size_t>(lengths[i]);
  }
  return displs;
}

std::vector<std::string> unpack(const std::string& all, const std::vector<int>& lengths,
                                const std::vector<int>& displs) {
  std::vector<std::string> texts;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    texts.push_back(all.substr(static_cast<std::size_t>(displs[i]),
                               static_cast<std::size_t>(lengths[i])));
  }
  return texts;
}

}  // namespace

std::vector<std::string> gather_strings(Runtime& runtime, const std::string& mine) {
  const MPI_Comm comm = runtime.end_comm();
  const int size = runtime.world_size();
  const bool root = runtime.world_rank() == 0;
  const int length = mpi_count(mine.size(), "a process's text");
  std::vector<int> lengths(root ? static_cast<std::size_t>(size) : 0);
  check(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, comm),
        [] { return std::string("gathering the text sizes"); });
  std::size_t total = 0;
  const std::vector<int> displs = packed_displacements(lengths, total);
  std::string all(total, '\0');
  check(MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), displs.data(),
                    MPI_CHAR, 0, comm),
        [] { return std::string("gathering the texts"); });
  return unpack(all, lengths, displs);
}

std::vector<std::string> all_gather_strings(MPI_Comm comm, const std::string& mine) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  const int length = mpi_count(mine.size(), "a process's text");
  std::vector<int> lengths(static_cast<std::size_t>(size));
  check(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm),
        [] { return std::string("gathering the text sizes"); });
  std::size_t total = 0;
  const std::vector<int> displs = packed_displacements(lengths, total);
  std::string all(total, '\0');
  check(MPI_Allgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), displs.data(),
                       MPI_CHAR, comm),
        [] { return std::string("gathering the texts"); });
  return unpack(all, lengths, displs);
}

}  // namespace ranklab::mpi_detail
