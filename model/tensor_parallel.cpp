#include "model/tensor_parallel.hpp"


namespace ranklab {

template <typename Scalar>
void all_reduce_sum(Communicator& group, Matrix<Scalar>& values, const DeviceMemory* device,
                    Communicator::Where where) {
  if (group.size() == 1) return;
  group.all_reduce(device_buffer(values, device), {.op = ReduceOp::sum}, where);
}

template <typename Scalar>
StackHooks<Scalar> tensor_parallel_hooks(Communicator& tp, const DeviceMemory* device) {
  if (tp.size() == 1) return {};
  const auto reduce = [&tp, device](Matrix<Scalar>& values, Communicator::Where where) {
    all_reduce_sum<Scalar>(tp, values, device, where);
  };
  return {.reduce_output = reduce, .reduce_input_grad = reduce};
}

template void all_reduce_sum<float>(Communicator&, Matrix<float>&, const DeviceMemory*,
                                    Communicator::Where);
template void all_reduce_sum<double>(Communicator&, Matrix<double>&, const DeviceMemory*,
                                     Communicator::Where);
template StackHooks<float> tensor_parallel_hooks<float>(Communicator&, const DeviceMemory*);
template StackHooks<double> tensor_parallel_hooks<double>(Communicator&, const DeviceMemory*);

}  // namespace ranklab
