// core/backend.cpp — the kernel slots of core/backend.h, and how a slot picks its backend.
#include <ember/core/backend.h>

#include <ember/core/error.h>
#include <ember/core/kernel_mode.h>

namespace ember {

EMBER_DEFINE_DISPATCH(fill_kernel);
EMBER_DEFINE_DISPATCH(copy_kernel);
EMBER_DEFINE_DISPATCH(copy_bytes_kernel);
EMBER_DEFINE_DISPATCH(copy_bytes_async_kernel);
EMBER_DEFINE_DISPATCH(unary_kernel);
EMBER_DEFINE_DISPATCH(binary_kernel);
EMBER_DEFINE_DISPATCH(where_kernel);
EMBER_DEFINE_DISPATCH(reduce_kernel);
EMBER_DEFINE_DISPATCH(softmax_kernel);
EMBER_DEFINE_DISPATCH(gemm_kernel);
EMBER_DEFINE_DISPATCH(addmm_kernel);
EMBER_DEFINE_DISPATCH(gemm_reads_16_bit_kernel);
EMBER_DEFINE_DISPATCH(random_fill_kernel);
EMBER_DEFINE_DISPATCH(index_select_kernel);
EMBER_DEFINE_DISPATCH(index_add_kernel);
EMBER_DEFINE_DISPATCH(gather_kernel);
EMBER_DEFINE_DISPATCH(scatter_add_kernel);
EMBER_DEFINE_DISPATCH(cross_entropy_kernel);
EMBER_DEFINE_DISPATCH(sgd_step_kernel);
EMBER_DEFINE_DISPATCH(adam_step_kernel);
EMBER_DEFINE_DISPATCH(foreach_norm_kernel);
EMBER_DEFINE_DISPATCH(one_hot_kernel);
EMBER_DEFINE_DISPATCH(conv2d_kernel);
EMBER_DEFINE_DISPATCH(conv2d_backward_input_kernel);
EMBER_DEFINE_DISPATCH(conv2d_backward_weight_kernel);
EMBER_DEFINE_DISPATCH(pool2d_kernel);
EMBER_DEFINE_DISPATCH(pool2d_backward_kernel);
EMBER_DEFINE_DISPATCH(batch_norm_kernel);
EMBER_DEFINE_DISPATCH(batch_norm_backward_kernel);
EMBER_DEFINE_DISPATCH(embedding_backward_kernel);
EMBER_DEFINE_DISPATCH(layer_norm_kernel);
EMBER_DEFINE_DISPATCH(layer_norm_backward_kernel);
EMBER_DEFINE_DISPATCH(topk_kernel);
EMBER_DEFINE_DISPATCH(flash_attention_kernel);
EMBER_DEFINE_DISPATCH(flash_attention_backward_kernel);

namespace detail {

KernelBackend kernel_backend_for(Device device) {
  // EMBER_KERNELS=reference (core/kernel_mode.h): the CPU's plain loops, core/reference/.
  // One relaxed atomic load per op; CUDA tensors keep their CUDA kernels in either mode.
  if (!device.is_cpu()) return KernelBackend::CUDA;
  return kernel_mode() == KernelMode::Reference ? KernelBackend::CPUReference : KernelBackend::CPU;
}

void throw_missing_kernel(const char* family, Device device) {
  // A missing CUDA kernel means ember_cuda was not built (or not linked): PyTorch's words.
  // (Every family CUDA implements is registered by each of its .cu files together.)
  if (device.is_cuda()) {
    throw DeviceError("Torch not compiled with CUDA enabled (ember was built without its CUDA backend)");
  }
  throw DeviceError(make_message("ember has no ", family, " for ", device));
}

}  // namespace detail

}  // namespace ember
