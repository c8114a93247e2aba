#include "model/tensor_parallel.hpp"


namespace ranklab {

template <typename Scalar>
void all_reduce_sum(Communicator& group, Matrix<Scalar>& values, const DeviceMemory* device) {
  if (group.size() == 1) return;
  group.all_reduce(device_buffer(values, device), {.op = ReduceOp::sum});
}

template <typename Scalar>
StackHooks<Scalar> tensor_parallel_hooks(Communicator& tp, const DeviceMemory* device) {
  if (tp.size() == 1) return {};
  const auto reduce = [&tp, device](Matrix<Scalar>& values) {
    all_reduce_sum<Scalar>(tp, values, device);
  };
  return {.reduce_output = reduce, .reduce_input_grad = reduce};
}

template void all_reduce_sum<float>(Communicator&, Matrix<float>&, const DeviceMemory*);
template void all_reduce_sum<double>(Communicator&, Matrix<double>&, const DeviceMemory*);
template StackHooks<float> tensor_parallel_hooks<float>(Communicator&, const DeviceMemory*);
template StackHooks<double> tensor_parallel_hooks<double>(Communicator&, const DeviceMemory*);

}  // namespace ranklab
