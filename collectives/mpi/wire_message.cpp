#include "collectives/mpi/detail/wire_message.hpp"

#include <algorithm>
#include <cstring>

#include "collectives/mpi/detail/mpi_call.hpp"

namespace ranklab::mpi_detail {

WireBuffer::WireBuffer(const WireHeader& header, ConstBuffer payload) : header_(header) {
  if (payload.bytes() > kStageBytes) {
    // MPI only reads a send's buffer; its C API predates const.
    describe_in_place(const_cast<void*>(payload.data), payload.bytes());
    return;
  }
  staging_.resize(sizeof(WireHeader) + payload.bytes());
  std::memcpy(staging_.data(), &header_, sizeof(WireHeader));
  if (payload.bytes() > 0) {
    std::memcpy(staging_.data() + sizeof(WireHeader), payload.data, payload.bytes());
  }
}

WireBuffer::WireBuffer(MutableBuffer payload) : header_{.magic = 0}, user_(payload) {
  if (payload.bytes() > kStageBytes) {
    describe_in_place(payload.data, payload.bytes());
    return;
  }
  staging_.resize(sizeof(WireHeader) + payload.bytes());
}

WireBuffer::~WireBuffer() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (type_ != MPI_DATATYPE_NULL && !finalized) MPI_Type_free(&type_);
}

void WireBuffer::describe_in_place(void* payload, std::size_t bytes) {
  int lengths[2] = {static_cast<int>(sizeof(WireHeader)), mpi_count(bytes, "a message")};
  MPI_Aint displacements[2];
  MPI_Get_address(&header_, &displacements[0]);
  MPI_Get_address(payload, &displacements[1]);
  check(MPI_Type_create_hindexed(2, lengths, displacements, MPI_BYTE, &type_),
        [] { return std::string("a message's datatype (MPI_Type_create_hindexed)"); });
  check(MPI_Type_commit(&type_), [] { return std::string("a message's datatype (MPI_Type_commit)"); });
}

int WireBuffer::count() const {
  return staged() ? mpi_count(staging_.size(), "a message") : 1;
}

const WireHeader* WireBuffer::received_header(std::size_t received) {
  if (received < sizeof(WireHeader)) return nullptr;
  if (staged()) std::memcpy(&header_, staging_.data(), sizeof(WireHeader));
  return header_.magic == WireHeader::kMagic ? &header_ : nullptr;
}

std::span<const std::byte> WireBuffer::finish_recv(std::size_t received) {
  const std::size_t payload =
      std::min(received - std::min(received, sizeof(WireHeader)), user_.bytes());
  if (staged() && payload > 0) {
    std::memcpy(user_.data, staging_.data() + sizeof(WireHeader), payload);
  }
  return {static_cast<const std::byte*>(user_.data), payload};
}

}  // namespace ranklab::mpi_detail
