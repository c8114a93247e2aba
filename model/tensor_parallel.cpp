#include "model/tensor_parallel.hpp"

#include "model/span_of.hpp"

namespace ranklab {

template <typename Scalar>
void all_reduce_sum(Communicator& group, Matrix<Scalar>& values) {
  if (group.size() == 1) return;
  group.all_reduce(span_of(values), {.op = ReduceOp::sum});
}

template <typename Scalar>
StackHooks<Scalar> tensor_parallel_hooks(Communicator& tp) {
  if (tp.size() == 1) return {};
  const auto reduce = [&tp](Matrix<Scalar>& values) { all_reduce_sum<Scalar>(tp, values); };
  return {.reduce_output = reduce, .reduce_input_grad = reduce};
}

template void all_reduce_sum<float>(Communicator&, Matrix<float>&);
template void all_reduce_sum<double>(Communicator&, Matrix<double>&);
template StackHooks<float> tensor_parallel_hooks<float>(Communicator&);
template StackHooks<double> tensor_parallel_hooks<double>(Communicator&);

}  // namespace ranklab
