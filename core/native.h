// core/native.h — the kernel-level op API: checks, output allocation, dispatch. No autograd.
//
// Every public op (ember::add, Tensor::sum, ...) is defined in autograd/, which records the
// op on the tape and calls the function of the same name here. These functions:
//   1. check their arguments (shapes, dtypes, devices) and throw PyTorch-worded errors,
//   2. work out the output's shape and dtype (broadcasting, type promotion),
//   3. allocate the output and hand the work to the backend of the inputs' device
//      (core/backend.h: CPU always, CUDA when built).
// Views (view, transpose, ...) only build new TensorImpls over the same storage.
// Files: core/views.cpp, core/copy.cpp, core/elementwise.cpp, core/reduce.cpp,
//        core/linalg.cpp, core/indexing.cpp, core/fused.cpp, core/conv.cpp, core/pooling.cpp.
#pragma once

#include <optional>
#include <tuple>
#include <vector>

#include <ember/core/backend.h>
#include <ember/core/expanding_array.h>
#include <ember/core/sgd_options.h>
#include <ember/core/tensor.h>

namespace ember::native {

// ----------------------------------------------------------------- views (views.cpp)
Tensor as_strided(const Tensor& self, IntArrayRef sizes, IntArrayRef strides, std::int64_t storage_offset);
// view: "view size is not compatible with input tensor's size and stride (at least one
// dimension spans across two contiguous subspaces). Use .reshape(...) instead."
Tensor view(const Tensor& self, IntArrayRef sizes);
Tensor reshape(const Tensor& self, IntArrayRef sizes);  // a view when possible, else a copy
Tensor transpose(const Tensor& self, std::int64_t dim0, std::int64_t dim1);
Tensor t(const Tensor& self);                 // "t() expects a tensor with <= 2 dimensions, but self is 3D"
Tensor permute(const Tensor& self, IntArrayRef dims);
Tensor squeeze(const Tensor& self);
Tensor squeeze(const Tensor& self, std::int64_t dim);
Tensor unsqueeze(const Tensor& self, std::int64_t dim);
Tensor flatten(const Tensor& self, std::int64_t start_dim, std::int64_t end_dim);
// expand: "The expanded size of the tensor (4) must match the existing size (3) at
// non-singleton dimension 1.  Target sizes: [2, 4].  Tensor sizes: [2, 3]"
Tensor expand(const Tensor& self, IntArrayRef sizes);
Tensor select(const Tensor& self, std::int64_t dim, std::int64_t index);
Tensor narrow(const Tensor& self, std::int64_t dim, std::int64_t start, std::int64_t length);
Tensor slice(const Tensor& self, std::int64_t dim, std::optional<std::int64_t> start,
             std::optional<std::int64_t> end, std::int64_t step);
Tensor alias(const Tensor& self);  // a new handle on the same data with no autograd meta (detach)

// ----------------------------------------------------------------- copies (copy.cpp)
Tensor contiguous(const Tensor& self);  // self itself when already contiguous
Tensor clone(const Tensor& self);       // always a fresh contiguous copy
Tensor to_dtype(const Tensor& self, DType dtype);    // self when dtype matches
// A bfloat16/float16 tensor as float32 (exact); any other tensor, or an undefined one, as it
// is. The ops whose 16-bit kernels compute in float32 anyway (convolution, pooling, fused
// attention) run their float32 kernel on widened inputs and round the result once.
Tensor widened(const Tensor& self);
Tensor to_device(const Tensor& self, Device device, bool non_blocking = false); // self when device matches
// dst <- src, broadcasting src to dst's shape and casting to dst's dtype; any devices.
void copy_(const Tensor& dst, const Tensor& src);
void fill_(const Tensor& self, Scalar value);
// ----------------------------------------------------------------- pinned memory (pinned_memory.cpp)
// A contiguous copy of a CPU tensor in page-locked memory (self when already pinned);
// DeviceError without a GPU: "Cannot access accelerator device when none is available."
Tensor pin_memory(const Tensor& self);
bool is_pinned(const Tensor& self);  // false for CUDA tensors and in CPU-only builds

// ----------------------------------------------------------------- elementwise (elementwise.cpp)
// Binary ops broadcast and promote (torch.result_type); comparisons return bool. Unary ops
// follow their row's dtype rule in core/op_list.h (exp of an int64 tensor is float32).
Tensor add(const Tensor& a, const Tensor& b, Scalar alpha = 1);
Tensor sub(const Tensor& a, const Tensor& b, Scalar alpha = 1);
// Every row of core/op_list.h: Tensor exp(const Tensor& self); Tensor mul(a, b); ...
#define EMBER_DECLARE_UNARY(name, ...) Tensor name(const Tensor& self);
#define EMBER_DECLARE_BINARY(name, ...) Tensor name(const Tensor& a, const Tensor& b);
EMBER_UNARY_OPS(EMBER_DECLARE_UNARY)
EMBER_BINARY_OPS(EMBER_DECLARE_BINARY)
// The backward kernels as ops: grad · f'(x), broadcasting and promoting like a binary op
// (x: what the op's derivative row saves, e.g. tanh's result or gelu's input).
#define EMBER_DECLARE_BACKWARD(name, ...) Tensor name(const Tensor& grad, const Tensor& x);
EMBER_BACKWARD_OPS(EMBER_DECLARE_BACKWARD)
#undef EMBER_DECLARE_BACKWARD
#undef EMBER_DECLARE_BINARY
#undef EMBER_DECLARE_UNARY
// Any unary kernel by its UnaryOp (gelu's tanh variant has no name of its own), with the
// dtype rule of its row.
Tensor unary(UnaryOp op, const Tensor& self);
Tensor pow(const Tensor& a, Scalar exponent);
Tensor clamp(const Tensor& self, std::optional<Scalar> min, std::optional<Scalar> max);
// clamp with tensor bounds: min(max(self, min), max), broadcasting and promoting all three;
// a NaN anywhere gives NaN, as PyTorch's.
Tensor clamp(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max);
// self where mask is false, value where it is true (value cast to self's dtype; mask bool,
// broadcast to self: "masked_fill_ only supports boolean masks, but got mask with dtype long int").
Tensor masked_fill(const Tensor& self, const Tensor& mask, Scalar value);
// value: a 0-d tensor ("masked_fill_ only supports a 0-dimensional value tensor, but got
// tensor with 1 dimension(s).").
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value);
// where(condition, a, b): condition must be bool: "where expected condition to be a boolean
// tensor, but got a tensor with dtype Float".
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b);
// In place: the result is written into self (broadcast to self's shape, cast to self's
// dtype; "result type Float can't be cast to the desired output type Long").
void add_(const Tensor& self, const Tensor& other, Scalar alpha = 1);
void sub_(const Tensor& self, const Tensor& other, Scalar alpha = 1);
void mul_(const Tensor& self, const Tensor& other);
void div_(const Tensor& self, const Tensor& other);

// ----------------------------------------------------------------- reductions (reduce.cpp)
// dims empty = all dims. sum/prod of integers (and bool) give int64, as PyTorch.
Tensor sum(const Tensor& self, IntArrayRef dims, bool keepdim, std::optional<DType> dtype = std::nullopt);
Tensor mean(const Tensor& self, IntArrayRef dims, bool keepdim, std::optional<DType> dtype = std::nullopt);
Tensor prod(const Tensor& self, IntArrayRef dims, bool keepdim, std::optional<DType> dtype = std::nullopt);
Tensor amax(const Tensor& self, IntArrayRef dims, bool keepdim);
Tensor amin(const Tensor& self, IntArrayRef dims, bool keepdim);
std::tuple<Tensor, Tensor> max(const Tensor& self, std::int64_t dim, bool keepdim);
std::tuple<Tensor, Tensor> min(const Tensor& self, std::int64_t dim, bool keepdim);
Tensor argmax(const Tensor& self, std::optional<std::int64_t> dim, bool keepdim);
Tensor argmin(const Tensor& self, std::optional<std::int64_t> dim, bool keepdim);
Tensor softmax(const Tensor& self, std::int64_t dim);      // numerically stable (max subtracted)
Tensor log_softmax(const Tensor& self, std::int64_t dim);
bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan);
bool equal(const Tensor& a, const Tensor& b);  // same sizes and same values
// (values, int64 indices) of the k largest/smallest along dim; NaN counts as the largest
// (topk.cpp: PyTorch's checks and its order of ties).
std::tuple<Tensor, Tensor> topk(const Tensor& self, std::int64_t k, std::int64_t dim, bool largest, bool sorted);

// ----------------------------------------------------------------- linear algebra (linalg.cpp)
// mm: "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)".
Tensor mm(const Tensor& a, const Tensor& b);
// op(a) · op(b), op transposing its matrix when asked (no transposed view is made), and the
// result laid out transposed (strides (1, rows): the transpose of a contiguous matrix, not a
// view of one) when asked. mm's checks on op(a) and op(b). The gradients of mm and addmm use
// it (autograd/linalg_ops.cpp): each wants its result in its operand's layout.
Tensor mm_transposed(const Tensor& a, bool transpose_a, const Tensor& b, bool transpose_b, bool transposed_result);
Tensor bmm(const Tensor& a, const Tensor& b);
// beta * bias + alpha * (a @ b), bias broadcast to [n, m].
Tensor addmm(const Tensor& bias, const Tensor& a, const Tensor& b, Scalar beta = 1, Scalar alpha = 1);
// torch.matmul's rules: 1-D·1-D dot, 2-D mm, 1-D promoted and squeezed, batched broadcast.
Tensor matmul(const Tensor& a, const Tensor& b);
// For a batched matmul (both operands at least 2-D, batch dims broadcast): whether the batch
// dims of both operands merge into one strided batch (then bmm on 3-D views reads them
// without a copy); when not, matmul runs one strided-batch GEMM per outer index instead.
bool matmul_batch_is_one_stride(const Tensor& a, const Tensor& b);
// torch.matmul's (2.x) choice for a >= 3-D operand beside a matrix or a vector: fold the
// larger one's batch dims into the rows of one mm/mv (true), or run one bmm (false).
bool matmul_should_fold(const Tensor& a, const Tensor& b);

// ----------------------------------------------------------------- indexing (indexing.cpp)
Tensor cat(const std::vector<Tensor>& tensors, std::int64_t dim);
Tensor stack(const std::vector<Tensor>& tensors, std::int64_t dim);
Tensor index_select(const Tensor& self, std::int64_t dim, const Tensor& index);
// out = self.clone(); out.index_add_(dim, index, source)
Tensor index_add(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& source);
Tensor gather(const Tensor& self, std::int64_t dim, const Tensor& index);
// out = self.clone(); out.scatter_add_(dim, index, source)
Tensor scatter_add(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& source);
// int64 class indices -> int64 one-hot; num_classes -1 = max + 1.
Tensor one_hot(const Tensor& self, std::int64_t num_classes = -1);

// ----------------------------------------------------------------- fused training ops (fused.cpp)
// One backend call each where the composite path makes several (docs/performance.md,
// "Fused ops").
//
// relu written over `fresh`'s own memory, returned as a new handle on fresh's storage (the
// same storage object and version counter): only for a tensor nobody else reads afterwards (the
// Linear + ReLU fusion applies it to addmm's fresh output, autograd/fused_ops.h). Not a
// user-facing in-place op: fresh's values are overwritten.
Tensor relu_over_fresh(const Tensor& fresh);

// Cross-entropy = log_softmax + nll_loss over each row of 2-D logits [rows, classes] with
// int64 class targets [rows], in one pass per row (backend cross_entropy). losses[r] is
// the row's loss (0 where target == ignore_index); with_grad also returns grad_logits =
// (softmax - one_hot(target)) per kept row (0 for ignored rows), divided by the number of
// kept rows when mean_over_kept. Errors as nll_loss: "Target 7 is out of bounds.",
// "expected scalar type Long but found Int", "Expected input batch_size (3) to match
// target batch_size (2).".
struct CrossEntropyRows {
  Tensor losses;       // [rows], logits' dtype
  Tensor grad_logits;  // [rows, classes] or undefined
  std::int64_t kept_rows = 0;
};
CrossEntropyRows cross_entropy_rows(const Tensor& logits, const Tensor& target, std::int64_t ignore_index,
                                    bool with_grad, bool mean_over_kept);

// One torch.optim.SGD update of `param` in place (core/fused_plans.h, SgdPlan, has the
// formula). param: contiguous, floating; grad: its shape (cast and made contiguous when
// needed); momentum_buffer: contiguous, param's shape and dtype, needed when momentum != 0
// (first_step fills it). Bumps the version counters of param and buffer. `options` is the
// optimizer's own hyper-parameter object (core/sgd_options.h), embedded in the plan as is.
void sgd_step_(const Tensor& param, const Tensor& grad, const Tensor& momentum_buffer,
               const optim::SGDOptions& options, bool first_step = false);

// torch._foreach_norm: the p-norm of each tensor (p > 0, or +inf), as one 1-D tensor of
// tensors.size() norms in the tensors' dtype, on their device: one backend call per 48
// tensors (core/fused_plans.h, ForeachNormPlan). Every tensor must be floating, of one
// dtype and on one device (clip_grad_norm_ groups them); non-contiguous ones are copied.
Tensor foreach_norm(const std::vector<Tensor>& tensors, double p);

// ----------------------------------------------------------------- checks shared by ops
// "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
void check_same_device(const Tensor& a, const Tensor& b);

// ----------------------------------------------------------------- convolution (conv.cpp)
// The checked arguments of a conv2d: one value per spatial dim.
struct Conv2dArgs {
  std::array<std::int64_t, 2> stride{1, 1}, padding{0, 0}, dilation{1, 1};
  std::int64_t groups = 1;
};
// Every check of PyTorch's conv2d, with its messages (input 3-D or 4-D; bias may be undefined).
Conv2dArgs check_conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const ExpandingArray<2>& stride,
                        const ExpandingArray<2>& padding, const ExpandingArray<2>& dilation, std::int64_t groups);
// 4-D input, checked arguments. The gradients overwrite a fresh result of the given sizes.
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const Conv2dArgs& args);
Tensor conv2d_backward_input(const Tensor& grad_output, const Tensor& weight, IntArrayRef input_sizes,
                             const Conv2dArgs& args);
Tensor conv2d_backward_weight(const Tensor& input, const Tensor& grad_output, IntArrayRef weight_sizes,
                              const Conv2dArgs& args);

// ----------------------------------------------------------------- pooling (pooling.cpp)
struct Pool2dArgs {
  PoolMode mode = PoolMode::Max;
  std::array<std::int64_t, 2> kernel{1, 1}, stride{1, 1}, padding{0, 0}, dilation{1, 1};
  std::array<std::int64_t, 2> output{0, 0};  // the output's spatial size
  bool ceil_mode = false, count_include_pad = true;
  std::int64_t divisor_override = 0;  // 0: none
};
// PyTorch's checks and output size for max_pool2d (mode Max) and avg_pool2d (mode Avg).
Pool2dArgs check_pool2d(PoolMode mode, const Tensor& input, const ExpandingArray<2>& kernel_size,
                        const ExpandingArray<2>& stride, const ExpandingArray<2>& padding,
                        const ExpandingArray<2>& dilation, bool ceil_mode, bool count_include_pad,
                        std::optional<std::int64_t> divisor_override);
Pool2dArgs check_adaptive_avg_pool2d(const Tensor& input, const ExpandingArray<2>& output_size);
// (output, indices); indices (int64, flat h * W + w in each plane) only for Max.
std::tuple<Tensor, Tensor> pool2d(const Tensor& input, const Pool2dArgs& args);
// d loss / d input from d loss / d output (and the indices for Max).
Tensor pool2d_backward(const Tensor& grad_output, const Tensor& indices, IntArrayRef input_sizes, const Pool2dArgs& args);

}  // namespace ember::native
