#include "backends/torch/proxy.hpp"

#include <cstring>
#include <numeric>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "comm/call_site.hpp"
#include "comm/matching.hpp"

namespace ranklab::torch_bridge {

struct ProcessProxy::Pending {
  Work work;
  /// What a send sends, where a receive lands, or a collective's input (and its output
  /// when it works in place).
  std::vector<std::byte> buffer;
  std::vector<std::byte> output;  ///< a collective's output when not in place
  bool receive = false;
  bool collective = false;
  bool in_place = false;
};

namespace {

using nlohmann::json;

/// A field the call must have, of the type it must have: a broken call is the bridge's
/// bug (or a foreign client's), named with the field.
template <typename T>
T field(const json& header, const char* name) {
  const auto it = header.find(name);
  if (it == header.end() || it->is_null()) {
    throw UsageError(fmt::format("the call has no '{}'", name));
  }
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    throw UsageError(fmt::format("the call's '{}' is not of the expected type: {}", name,
                                 it->dump()));
  }
}

template <typename T>
std::optional<T> optional_field(const json& header, const char* name) {
  const auto it = header.find(name);
  if (it == header.end() || it->is_null()) return std::nullopt;
  return field<T>(header, name);
}

DataType dtype_of(const json& header) {
  const auto name = field<std::string>(header, "dtype");
  if (const auto dtype = parse_data_type(name)) return *dtype;
  throw UsageError(fmt::format("unknown dtype '{}'", name));
}

ReduceOp reduce_of(const json& header) {
  const auto name = field<std::string>(header, "reduce");
  if (const auto op = parse_reduce_op(name)) return *op;
  throw UsageError(fmt::format("unknown reduce op '{}'", name));
}

std::size_t total(const std::vector<std::size_t>& counts) {
  return std::accumulate(counts.begin(), counts.end(), std::size_t{0});
}

/// The script's frame as the reports name it: interned, since a site outlives the call.
SourceSite site_of(const json& header) {
  const auto it = header.find("site");
  if (it == header.end() || !it->is_array() || it->size() != 3) return {};
  const json& frame = *it;
  if (!frame[0].is_string() || !frame[1].is_number_unsigned() || !frame[2].is_string()) return {};
  return {.file = intern_label(frame[0].get<std::string>())->c_str(),
          .line = frame[1].get<std::uint32_t>(),
          .function = intern_label(frame[2].get<std::string>())->c_str()};
}

/// The process's answer for an error the job ended with: raised in the script as a
/// RuntimeError; `released` when the job ended for a reason outside this call's arguments
/// (a deadlock, another rank's failure), so the process leaves quietly.
json error_answer(const std::string& what, bool released) {
  return {{"error", "ranklab: " + what}, {"released", released}};
}

}  // namespace

ProcessProxy::ProcessProxy(Communicator& world, WireConnection& connection,
                           DecisionPoints& decisions)
    : world_(world), connection_(connection), decisions_(decisions) {}

std::string ProcessProxy::last_call() const {
  if (last_site_.file == nullptr) return {};
  return fmt::format("{}:{}", last_site_.file, last_site_.line);
}

// Handles the script never waited for are dropped by the backend's rule for a dropped
// handle (emulator/request.hpp): the end of the run reports a send still posted.
ProcessProxy::~ProcessProxy() = default;

void ProcessProxy::serve() {
  for (;;) {
    WireMessage message;
    try {
      message = decisions_.next_frame(world_, last_call());
    } catch (const WireConnection::ConnectionClosed&) {
      throw ProcessFailedError(
          fmt::format("its process ended without finishing its script (see its output)"));
    }
    const auto op = field<std::string>(message.header, "op");
    if (op == "exit") return;
    if (op == "error") {
      const std::string error = message.header.value("error", std::string("an error"));
      const std::string traceback = message.header.value("traceback", std::string());
      throw ProcessFailedError(traceback.empty() ? error
                                                 : fmt::format("{}\n{}", error, traceback));
    }
    try {
      const SourceSite site = site_of(message.header);
      if (site.file != nullptr) last_site_ = site;
      if (const auto stack = message.header.find("stack"); stack != message.header.end()) {
        last_stack_ = *stack;
      }
      const auto caller = world_.called_from(site);
      answer(message);
    } catch (const UsageError& e) {
      connection_.send(error_answer(e.what(), /*released=*/false));
      throw;
    } catch (const Error& e) {
      connection_.send(error_answer(e.what(), /*released=*/true));
      throw;
    }
  }
}

void ProcessProxy::answer(WireMessage& message) {
  const json& header = message.header;
  const auto op = field<std::string>(header, "op");
  if (op == "wait" || op == "test") return complete(header, op == "wait");
  Communicator& comm = group_of(header);
  if (op == "isend" || op == "irecv") return post_point_to_point(header, comm, message.payload);
  if (op == "barrier") {
    // monitored_barrier is a barrier the reports name as the script does.
    if (const auto label = optional_field<std::string>(header, "label")) {
      const auto named = comm.annotate(*label);
      comm.barrier();
    } else {
      comm.barrier();
    }
    connection_.send(json::object());
    return;
  }
  collective(header, comm, message.payload);
}

namespace {

bool works_in_place(const std::string& op) {
  return op == "all_reduce" || op == "broadcast" || op == "reduce";
}

}  // namespace

void ProcessProxy::collective(const json& header, Communicator& comm,
                              std::span<std::byte> payload) {
  const auto op = field<std::string>(header, "op");
  const DataType dtype = dtype_of(header);
  const std::size_t in_count = total(field<std::vector<std::size_t>>(header, "counts"));
  const std::size_t out_count = total(field<std::vector<std::size_t>>(header, "out_counts"));
  if (payload.size() != in_count * size_of(dtype)) {
    throw UsageError(fmt::format("{} sent {} bytes for {} elements of {}", op, payload.size(),
                                 in_count, to_string(dtype)));
  }
  const bool in_place = works_in_place(op);
  if (optional_field<bool>(header, "async").value_or(false)) {
    // Posted now, answered with a handle; its wait or poll answers the output. Its own copy
    // of the input: the region the payload may lie in serves the process's next call.
    auto pending = std::make_unique<Pending>();
    pending->collective = true;
    pending->in_place = in_place;
    pending->buffer.assign(payload.begin(), payload.end());
    if (!in_place) pending->output.resize(out_count * size_of(dtype));
    const MutableBuffer input{pending->buffer.data(), in_count, dtype};
    const MutableBuffer output =
        in_place ? input : MutableBuffer{pending->output.data(), out_count, dtype};
    issue(header, comm, input, output, &pending->work);
    connection_.send({{"handle", add_pending(std::move(pending))}});
    return;
  }
  // In place: a payload in the process's region is answered from where it lies.
  const MutableBuffer input{payload.data(), in_count, dtype};
  std::vector<std::byte> output(in_place ? 0 : out_count * size_of(dtype));
  issue(header, comm, input,
        in_place ? input : MutableBuffer{output.data(), out_count, dtype}, nullptr);
  connection_.send(json::object(), in_place ? std::span<const std::byte>(payload)
                                            : std::span<const std::byte>(output));
}

void ProcessProxy::issue(const json& header, Communicator& comm, MutableBuffer input,
                         MutableBuffer output, Work* posted) {
  // The plain (blocking) form, or the posted one into *posted.
  const auto run = [posted](auto&& blocking, auto&& posting) {
    if (posted != nullptr) {
      *posted = posting();
    } else {
      blocking();
    }
  };
  const auto op = field<std::string>(header, "op");
  if (op == "all_reduce") {
    const AllReduceOptions options{.op = reduce_of(header)};
    return run([&] { comm.all_reduce(input, options); },
               [&] { return comm.iall_reduce(input, options); });
  }
  if (op == "broadcast") {
    const BroadcastOptions options{.root = field<int>(header, "root")};
    return run([&] { comm.broadcast(input, options); },
               [&] { return comm.ibroadcast(input, options); });
  }
  if (op == "reduce") {
    const ReduceOptions options{.op = reduce_of(header), .root = field<int>(header, "root")};
    return run([&] { comm.reduce(input, options); },
               [&] { return comm.ireduce(input, options); });
  }
  const ConstBuffer in = input;
  if (op == "all_gather") {
    return run([&] { comm.all_gather(in, output); },
               [&] { return comm.iall_gather(in, output); });
  }
  if (op == "reduce_scatter") {
    const ReduceScatterOptions options{.op = reduce_of(header)};
    return run([&] { comm.reduce_scatter(in, output, options); },
               [&] { return comm.ireduce_scatter(in, output, options); });
  }
  if (op == "gather") {
    const GatherOptions options{.root = field<int>(header, "root")};
    return run([&] { comm.gather(in, output, options); },
               [&] { return comm.igather(in, output, options); });
  }
  if (op == "scatter") {
    const ScatterOptions options{.root = field<int>(header, "root")};
    return run([&] { comm.scatter(in, output, options); },
               [&] { return comm.iscatter(in, output, options); });
  }
  if (op != "all_to_all") throw UsageError(fmt::format("unknown call '{}'", op));
  auto send_counts = optional_field<std::vector<std::size_t>>(header, "send_counts");
  auto recv_counts = optional_field<std::vector<std::size_t>>(header, "recv_counts");
  if (!send_counts && !recv_counts) {
    return run([&] { comm.all_to_all(in, output); },
               [&] { return comm.iall_to_all(in, output); });
  }
  // torch's split sizes: either side may be left even.
  const auto even = [&](std::size_t count) {
    return std::vector<std::size_t>(static_cast<std::size_t>(comm.size()),
                                    count / static_cast<std::size_t>(comm.size()));
  };
  if (!send_counts) send_counts = even(input.count);
  if (!recv_counts) recv_counts = even(output.count);
  return run([&] { comm.all_to_all_v(in, *send_counts, output, *recv_counts); },
             [&] { return comm.iall_to_all_v(in, *send_counts, output, *recv_counts); });
}

void ProcessProxy::post_point_to_point(const json& header, Communicator& comm,
                                       std::span<const std::byte> payload) {
  const auto op = field<std::string>(header, "op");
  const DataType dtype = dtype_of(header);
  const std::size_t count = total(field<std::vector<std::size_t>>(header, "counts"));
  const int tag = header.value("tag", 0);
  auto pending = std::make_unique<Pending>();
  if (op == "isend") {
    if (payload.size() != count * size_of(dtype)) {
      throw UsageError(fmt::format("isend sent {} bytes for {} elements of {}", payload.size(),
                                   count, to_string(dtype)));
    }
    // Its own copy: the region the payload may lie in serves the process's next call.
    pending->buffer.assign(payload.begin(), payload.end());
    pending->work = comm.isend(ConstBuffer{pending->buffer.data(), count, dtype},
                               field<int>(header, "peer"), tag);
  } else {
    pending->receive = true;
    pending->buffer.resize(count * size_of(dtype));
    const int source = optional_field<int>(header, "peer").value_or(kAnySource);
    pending->work = comm.irecv(MutableBuffer{pending->buffer.data(), count, dtype}, source, tag);
  }
  connection_.send({{"handle", add_pending(std::move(pending))}});
}

std::int64_t ProcessProxy::add_pending(std::unique_ptr<Pending> pending) {
  const std::int64_t handle = next_handle_++;
  pending_.emplace(handle, std::move(pending));
  return handle;
}

void ProcessProxy::complete(const json& header, bool wait) {
  const auto handle = field<std::int64_t>(header, "handle");
  const auto it = pending_.find(handle);
  if (it == pending_.end()) throw UsageError(fmt::format("no posted operation {}", handle));
  Pending& pending = *it->second;
  if (wait) {
    pending.work.wait();
  } else if (!pending.work.test()) {
    world_.yield();  // a polling script lets the other ranks run, as MPI_Test loops do
    connection_.send({{"done", false}});
    return;
  }
  json answer = {{"done", true}};
  std::span<const std::byte> data;
  if (pending.receive) {
    const RecvStatus status = pending.work.status();
    answer["source"] = status.source;
    data = pending.buffer;
  } else if (pending.collective) {
    data = pending.in_place ? pending.buffer : pending.output;
  }
  connection_.send(answer, data);
  pending_.erase(it);
}

Communicator& ProcessProxy::group_of(const json& header) {
  const auto ranks = optional_field<std::vector<int>>(header, "group");
  if (!ranks) return world_;
  auto it = groups_.find(*ranks);
  if (it == groups_.end()) it = groups_.emplace(*ranks, world_.new_group(*ranks)).first;
  return it->second;
}

}  // namespace ranklab::torch_bridge
