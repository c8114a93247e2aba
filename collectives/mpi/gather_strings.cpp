#include "collectives/mpi/detail/gather_strings.hpp"

#include "collectives/mpi/detail/mpi_call.hpp"

namespace ranklab::mpi_detail {

std::vector<std::string> gather_strings(Runtime& runtime, const std::string& mine) {
  const MPI_Comm comm = runtime.end_comm();
  const int size = runtime.world_size();
  const bool root = runtime.world_rank() == 0;
  const int length = mpi_count(mine.size(), "a process's text");
  std::vector<int> lengths(root ? static_cast<std::size_t>(size) : 0);
  check(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, comm),
        [] { return std::string("gathering the text sizes"); });
  std::vector<int> displs(lengths.size());
  std::size_t total = 0;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    displs[i] = mpi_count(total, "the texts of the job");
    total += static_cast<std::size_t>(lengths[i]);
  }
  std::string all(total, '\0');
  check(MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), displs.data(),
                    MPI_CHAR, 0, comm),
        [] { return std::string("gathering the texts"); });
  std::vector<std::string> texts;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    texts.push_back(all.substr(static_cast<std::size_t>(displs[i]),
                               static_cast<std::size_t>(lengths[i])));
  }
  return texts;
}

}  // namespace ranklab::mpi_detail
