// core/elementwise.cpp — the native elementwise ops: arithmetic, comparisons, unary math,
// clamp, pow, where, and the in-place add_/sub_/mul_/div_.
//
// Tutorial §2.3 (tensor arithmetic and broadcasting). Every op follows the same four steps,
// which is what makes adding one cheap (docs/adding-an-op.md):
//   1. check      devices agree (check_same_device), dtypes are allowed (PyTorch's errors);
//   2. promote    pick the dtype to compute in (core/type_promotion.h) and cast the inputs
//                 to it, so the backend kernel only ever sees one dtype;
//   3. allocate   the output: the broadcast shape, the computed dtype (bool for comparisons);
//   4. dispatch   describe the loop with a StridedPlan (core/tensor_iterator.h) and hand it
//                 to the backend of the device (core/backend.h).
// None of this records autograd: autograd/ wraps these functions.
#include <ember/core/native.h>

#include <ember/core/backend.h>
#include <ember/core/factories.h>
#include <ember/core/tensor_iterator.h>
#include <ember/core/type_promotion.h>
#include <ember/core/value_range.h>

namespace ember::native {

void check_same_device(const Tensor& a, const Tensor& b) {
  const Device da = a.device(), db = b.device();
  // An unresolved "cuda" (index -1) is the current GPU: it matches any index.
  if (da.type() == db.type() && (da.index() == db.index() || !da.has_index() || !db.has_index())) return;
  // A 0-d CPU tensor (a wrapped number such as the 2 in `x * 2`, or torch.tensor(2.)) may
  // join a CUDA op: the op copies its single value over (PyTorch allows this too).
  auto is_cpu_scalar = [](const Tensor& t) { return t.is_cpu() && t.dim() == 0; };
  if (is_cpu_scalar(a) || is_cpu_scalar(b)) return;
  // PyTorch names the accelerator first: "cuda:0 and cpu!".
  const Tensor& first = a.is_cpu() ? b : a;
  const Tensor& second = a.is_cpu() ? a : b;
  throw DeviceError(make_message("Expected all tensors to be on the same device, but found at least two devices, ",
                                 first.device(), " and ", second.device(), "!"));
}

namespace {

// The device an op runs on: that of the first operand that is not a CPU 0-d tensor.
// (An initializer_list, not a vector: every binary op calls this, and a vector would be a
// heap allocation per op.)
Device common_device(std::initializer_list<Tensor> operands) {
  for (auto i = operands.begin(); i != operands.end(); ++i) {
    for (auto j = i + 1; j != operands.end(); ++j) check_same_device(*i, *j);
  }
  for (const Tensor& operand : operands) {
    if (!operand.is_cpu()) return operand.device();
  }
  return kCPU;
}

// The operand ready for the kernel: on the op's device and in the compute dtype.
Tensor prepare_input(const Tensor& input, Device device, DType dtype) {
  return to_dtype(to_device(input, device), dtype);
}

void run_binary(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, Scalar alpha) {
  if (out.numel() == 0) return;
  StridedPlan plan = make_strided_plan(out, {a, b});
  binary_kernel(out.device(), op, plan, alpha);
}

// PyTorch's dtype rules that are errors rather than promotions.
void check_binary_dtypes(BinaryOp op, const Tensor& a, const Tensor& b, DType common, Scalar alpha) {
  if (op == BinaryOp::Sub) {
    EMBER_CHECK(!(a.dtype() == kBool && b.dtype() == kBool), DTypeError,
                "Subtraction, the `-` operator, with two bool tensors is not supported. "
                "Use the `^` or `logical_xor()` operator instead.");
    EMBER_CHECK(a.dtype() != kBool && b.dtype() != kBool, DTypeError,
                "Subtraction, the `-` operator, with a bool tensor is not supported. "
                "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.");
  }
  EMBER_CHECK(!(op == BinaryOp::Pow && common == kBool), DTypeError, "\"pow\" not implemented for 'Bool'");
  if (op == BinaryOp::Add || op == BinaryOp::Sub) {
    EMBER_CHECK(!(is_integral(common, true) && alpha.is_floating_point()), DTypeError,
                "For integral input tensors, argument alpha must not be a floating point number.");
    EMBER_CHECK(!alpha.is_bool() || common == kBool, DTypeError, "Boolean alpha only supported for Boolean results.");
  }
}

// The dtype the kernel computes in: the promoted one, except that true division of
// integers computes in the default float dtype (1 / 2 == 0.5).
DType compute_dtype(BinaryOp op, DType common) {
  if (op == BinaryOp::Div && !is_floating_point(common)) return default_float_dtype();
  return common;
}

// PyTorch's CPU kernels multiply or divide a bfloat16/float16 tensor by a number (a wrapped
// C++/Python number, or any one-element tensor of another dtype) using the number's own
// value as a float, not the number rounded to the tensor's dtype: x * 0.7 is
// round16(float(x) · float(0.7)). (Addition and subtraction do round it; measured against
// PyTorch 2.15.) Only as the second operand: number * x is x.mul(number), as in libtorch,
// but mul(tensor, x) for a one-element tensor rounds it. The float32 op on the widened tensor computes exactly that product, rounded once.
bool scales_by_unrounded_number(BinaryOp op, const Tensor& tensor, const Tensor& number, DType compute) {
  return (op == BinaryOp::Mul || op == BinaryOp::Div) && is_reduced_floating_point(compute) &&
         number.numel() == 1 && number.dim() <= tensor.dim() && number.dtype() != compute &&
         tensor.dtype() == compute;
}

// PyTorch's CPU add/sub with an alpha other than ±1 on 16-bit tensors runs its vector loop
// (a + alpha·b in float, rounded once: ember's loop) over whole blocks of 32 elements, and its
// scalar loop over the rest in c10's 16-bit arithmetic: alpha·b rounded, then the sum rounded
// (measured on 2.15). For contiguous operands of one shape — the optimizers' updates — ember
// recomputes those last numel % 32 elements the same way. (Above 32768 elements PyTorch
// splits the range between its threads and each part ends in its own scalar tail; ember keeps
// the one-thread layout.)
constexpr std::int64_t kPyTorchVectorBlock = 32;

bool has_scalar_tail(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, Scalar alpha) {
  if (op != BinaryOp::Add && op != BinaryOp::Sub) return false;
  const double value = alpha.to_double();
  return value != 1.0 && value != -1.0 && is_reduced_floating_point(out.dtype()) && out.is_cpu() &&
         a.dtype() == out.dtype() && b.dtype() == out.dtype() && a.is_cpu() && b.is_cpu() &&
         out.numel() % kPyTorchVectorBlock != 0 && IntArrayRef(a.sizes()) == IntArrayRef(out.sizes()) &&
         IntArrayRef(b.sizes()) == IntArrayRef(out.sizes()) && out.is_contiguous() && a.is_contiguous() &&
         b.is_contiguous();
}

// The last numel % 32 elements of a tensor, flattened.
Tensor scalar_tail(const Tensor& t) {
  const std::int64_t n = t.numel();
  return slice(view(t, {n}), 0, n - n % kPyTorchVectorBlock, n, 1);
}

// out's tail <- a_tail + round16(alpha16 · b_tail), each step rounded to the 16-bit dtype.
void write_scalar_tail(BinaryOp op, const Tensor& out, const Tensor& a_tail, const Tensor& b_tail, Scalar alpha) {
  const double value = op == BinaryOp::Sub ? -alpha.to_double() : alpha.to_double();
  const Tensor alpha16 = full({}, value, TensorOptions().dtype(out.dtype()));  // alpha rounded, as c10 does
  Tensor product = empty(b_tail.sizes(), b_tail.options());
  run_binary(BinaryOp::Mul, product, b_tail, alpha16, 1);
  run_binary(BinaryOp::Add, scalar_tail(out), a_tail, product, 1);
}

Tensor binary_op(BinaryOp op, const Tensor& a, const Tensor& b, Scalar alpha = 1) {
  Device device = common_device({a, b});
  DType common = result_type(a, b);
  check_binary_dtypes(op, a, b, common, alpha);
  DType compute = compute_dtype(op, common);
  if (scales_by_unrounded_number(op, a, b, compute)) return to_dtype(binary_op(op, widened(a), b), compute);
  Tensor out = empty(broadcast_shapes(a.sizes(), b.sizes()),
                     TensorOptions().dtype(is_comparison(op) ? kBool : compute).device(device));
  run_binary(op, out, prepare_input(a, device, compute), prepare_input(b, device, compute), alpha);
  if (has_scalar_tail(op, out, a, b, alpha)) write_scalar_tail(op, out, scalar_tail(a), scalar_tail(b), alpha);
  return out;
}

// self <- self (op) other. The result is computed in the promoted dtype and must be
// castable back into self's dtype; other is broadcast to self, never self to other.
void inplace_binary_op(BinaryOp op, const Tensor& self, const Tensor& other, Scalar alpha = 1) {
  check_same_device(self, other);
  check_no_internal_overlap(self);
  DType common = result_type(self, other);
  check_binary_dtypes(op, self, other, common, alpha);
  DType compute = compute_dtype(op, common);
  EMBER_CHECK(can_cast(compute, self.dtype()), DTypeError, "result type ", scalar_type_name(compute),
              " can't be cast to the desired output type ", scalar_type_name(self.dtype()));
  Shape broadcast = broadcast_shapes(self.sizes(), other.sizes());
  EMBER_CHECK(broadcast == self.sizes(), ShapeError, "output with shape ", shape_to_string(self.sizes()),
              " doesn't match the broadcast shape ", shape_to_string(broadcast));
  if (scales_by_unrounded_number(op, self, other, compute)) {
    copy_(self, binary_op(op, widened(self), other));  // rounds once; bumps the version
    return;
  }
  Tensor other_ready = prepare_input(other, self.device(), compute);
  if (compute == self.dtype()) {
    // The common case: write straight into self (out and a are the same elements, which
    // is safe for an elementwise loop: each element is read before it is written).
    const bool tail = has_scalar_tail(op, self, self, other_ready, alpha);
    const Tensor self_tail = tail ? clone(scalar_tail(self)) : Tensor();  // before it is overwritten
    run_binary(op, self, self, other_ready, alpha);
    if (tail) write_scalar_tail(op, self, self_tail, scalar_tail(other_ready), alpha);
    self.bump_version();
  } else {
    // e.g. int32 self += int64 tensor: compute in int64, then cast back into self.
    Tensor result = empty(self.sizes(), TensorOptions().dtype(compute).device(self.device()));
    run_binary(op, result, to_dtype(self, compute), other_ready, alpha);
    copy_(self, result);  // bumps the version
  }
}

Tensor unary_op(UnaryOp op, const Tensor& self, DType compute, const UnaryParams& params = {}) {
  Tensor input = to_dtype(self, compute);
  Tensor out = empty(self.sizes(), TensorOptions().dtype(compute).device(self.device()));
  if (out.numel() > 0) {
    StridedPlan plan = make_strided_plan(out, {input});
    unary_kernel(out.device(), op, plan, params);
  }
  return out;
}

// What a row of core/op_list.h says about dtypes.
struct DTypeRule {
  OpInputs inputs;
  const char* message;
};

DTypeRule dtype_rule(UnaryOp op) {
  switch (op) {
#define EMBER_NAMED_RULE(name, Functor, inputs, method, message) \
  case UnaryOp::Functor: return {OpInputs::inputs, message};
#define EMBER_VARIANT_RULE(Functor, inputs, message) \
  case UnaryOp::Functor: return {OpInputs::inputs, message};
    EMBER_UNARY_OPS(EMBER_NAMED_RULE)
    EMBER_UNARY_VARIANTS(EMBER_VARIANT_RULE)
#undef EMBER_VARIANT_RULE
#undef EMBER_NAMED_RULE
    case UnaryOp::Clamp:
    case UnaryOp::PowScalar: break;
  }
  return {OpInputs::AnyDType, nullptr};
}

// The dtype a unary op computes in, or PyTorch's error.
DType unary_compute_dtype(const DTypeRule& rule, DType input) {
  switch (rule.inputs) {
    case OpInputs::AnyDType:
      EMBER_CHECK(rule.message == nullptr || input != kBool, DTypeError, rule.message);
      return input;
    case OpInputs::ToFloat:
      return is_floating_point(input) ? input : default_float_dtype();
    case OpInputs::FloatOnly:
      EMBER_CHECK(is_floating_point(input), DTypeError, "\"", rule.message, "\" not implemented for '",
                  scalar_type_name(input), "'");
      return input;
  }
  return input;
}

// grad · f'(x) for a backward row of core/op_list.h. Laid out like PyTorch's iterator,
// which lists x first (so its shape error names x "a").
Tensor backward_op(BinaryOp op, const char* name, const Tensor& grad, const Tensor& x) {
  check_same_device(x, grad);
  const DType dtype = result_type(grad, x);
  if (op == BinaryOp::ReluBackward) {
    EMBER_CHECK(dtype != kBool, DTypeError, "\"threshold_", x.is_cuda() ? "cuda" : "cpu",
                "\" not implemented for 'Bool'");
  } else {
    EMBER_CHECK(is_floating_point(dtype), DTypeError, "\"", name, "\" not implemented for '", scalar_type_name(dtype),
                "'");
  }
  const Shape sizes = broadcast_shapes(x.sizes(), grad.sizes());
  const Device device = x.is_cpu() && x.dim() == 0 ? grad.device() : x.device();
  Tensor out = empty(sizes, TensorOptions().dtype(dtype).device(device));
  if (out.numel() == 0) return out;
  // Named locals: the plan holds raw pointers, so cast copies must outlive the call.
  Tensor grad_ready = prepare_input(grad, device, dtype), x_ready = prepare_input(x, device, dtype);
  StridedPlan plan = make_strided_plan(out, {grad_ready, x_ready});
  binary_kernel(device, op, plan, 1);
  return out;
}

}  // namespace

// ------------------------------------------------------------------ binary

Tensor add(const Tensor& a, const Tensor& b, Scalar alpha) { return binary_op(BinaryOp::Add, a, b, alpha); }
Tensor sub(const Tensor& a, const Tensor& b, Scalar alpha) { return binary_op(BinaryOp::Sub, a, b, alpha); }
#define EMBER_DEFINE_BINARY(name, Functor, ...) \
  Tensor name(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::Functor, a, b); }
EMBER_BINARY_OPS(EMBER_DEFINE_BINARY)
#undef EMBER_DEFINE_BINARY

#define EMBER_DEFINE_BACKWARD(name, Functor, ...) \
  Tensor name(const Tensor& grad, const Tensor& x) { return backward_op(BinaryOp::Functor, #name, grad, x); }
EMBER_BACKWARD_OPS(EMBER_DEFINE_BACKWARD)
#undef EMBER_DEFINE_BACKWARD

Tensor pow(const Tensor& self, Scalar exponent) {
  DType compute = result_type(self, exponent);
  EMBER_CHECK(!(is_integral(compute, true) && exponent.is_integral() && exponent.to_int64() < 0), ValueError,
              "Integers to negative integer powers are not allowed.");
  UnaryParams params;
  params.exponent = exponent.to_double();
  return unary_op(UnaryOp::PowScalar, self, compute, params);
}

// ------------------------------------------------------------------ unary

Tensor unary(UnaryOp op, const Tensor& self) {
  return unary_op(op, self, unary_compute_dtype(dtype_rule(op), self.dtype()));
}

#define EMBER_DEFINE_UNARY(name, Functor, ...) \
  Tensor name(const Tensor& self) { return unary(UnaryOp::Functor, self); }
EMBER_UNARY_OPS(EMBER_DEFINE_UNARY)
#undef EMBER_DEFINE_UNARY

Tensor clamp(const Tensor& self, std::optional<Scalar> min, std::optional<Scalar> max) {
  EMBER_CHECK(min.has_value() || max.has_value(), ValueError,
              "torch.clamp: At least one of 'min' or 'max' must not be None");
  // The bounds promote like wrapped numbers: an int64 tensor clamped to 0.5 is float32.
  std::vector<Tensor> operands{self};
  if (min) operands.push_back(scalar_to_tensor(*min));
  if (max) operands.push_back(scalar_to_tensor(*max));
  const DType compute = result_type(operands);
  UnaryParams params;
  params.has_low = min.has_value();
  params.has_high = max.has_value();
  if (min) params.low = min->to_double();
  if (max) params.high = max->to_double();
  if (is_integral(compute, /*include_bool=*/false)) {
    // Integer bounds stay integers (2^53 + 1 is not a double), and must make sense for the
    // dtype. A bound that cannot bind (a min below the dtype's range, a max above it) is
    // dropped; one that excludes every value is PyTorch's error.
    const IntegralRange range = integral_range(compute);
    if (min) {
      params.low_int = min->to_int64();
      EMBER_CHECK(params.low_int <= range.max, ValueError, "Clamp min value ", min->to_double(),
                  " is outside the representable range of ", scalar_type_name(compute));
      params.has_low = params.low_int > range.lowest;
    }
    if (max) {
      params.high_int = max->to_int64();
      EMBER_CHECK(params.high_int >= range.lowest, ValueError, "Clamp max value ", max->to_double(),
                  " is outside the representable range of ", scalar_type_name(compute));
      params.has_high = params.high_int < range.max;
    }
  }
  return unary_op(UnaryOp::Clamp, self, compute, params);
}

// ------------------------------------------------------------------ where

Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b) {
  EMBER_CHECK(condition.dtype() == kBool, DTypeError,
              "where expected condition to be a boolean tensor, but got a tensor with dtype ",
              scalar_type_name(condition.dtype()));
  Device device = common_device({condition, a, b});
  DType dtype = result_type(a, b);
  Tensor out = empty(broadcast_shape_of({condition, a, b}), TensorOptions().dtype(dtype).device(device));
  if (out.numel() > 0) {
    // Named locals: the plan holds raw pointers, so the cast copies must outlive it.
    Tensor condition_ready = to_device(condition, device);
    Tensor a_ready = prepare_input(a, device, dtype), b_ready = prepare_input(b, device, dtype);
    StridedPlan plan = make_strided_plan(out, {condition_ready, a_ready, b_ready});
    where_kernel(device, plan);
  }
  return out;
}

Tensor clamp(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  EMBER_CHECK(min.has_value() || max.has_value(), ValueError,
              "torch.clamp: At least one of 'min' or 'max' must not be None");
  Tensor out = self;
  if (min) out = maximum(out, *min);  // maximum and minimum propagate NaN, as clamp does
  if (max) out = minimum(out, *max);
  // maximum(x, min) of one tensor returns a new tensor; with neither op run out is self,
  // which cannot happen (checked above).
  return out;
}

Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value) {
  EMBER_CHECK(mask.dtype() == kBool, DTypeError, "masked_fill_ only supports boolean masks, but got mask with dtype ",
              c_type_name(mask.dtype()));
  EMBER_CHECK(value.dim() == 0, ShapeError, "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
              value.dim(), " dimension(s).");
  // The result has self's dtype and shape (PyTorch's out-of-place masked_fill is
  // self.clone().masked_fill_(mask, value)): the mask broadcasts to self, never self to it.
  const Shape broadcast = broadcast_shapes(self.sizes(), mask.sizes());
  EMBER_CHECK(broadcast == self.sizes(), ShapeError, "output with shape ", shape_to_string(self.sizes()),
              " doesn't match the broadcast shape ", shape_to_string(broadcast));
  Device device = common_device({self, mask});
  Tensor value_ready = to_dtype(to_device(value, device), self.dtype());
  Tensor out = empty(self.sizes(), TensorOptions().dtype(self.dtype()).device(device));
  if (out.numel() > 0) {
    Tensor mask_ready = to_device(mask, device), self_ready = to_device(self, device);
    StridedPlan plan = make_strided_plan(out, {mask_ready, value_ready, self_ready});
    where_kernel(device, plan);
  }
  return out;
}

Tensor masked_fill(const Tensor& self, const Tensor& mask, Scalar value) {
  return masked_fill(self, mask, scalar_to_tensor(value));
}

// ------------------------------------------------------------------ in place

void add_(const Tensor& self, const Tensor& other, Scalar alpha) { inplace_binary_op(BinaryOp::Add, self, other, alpha); }
void sub_(const Tensor& self, const Tensor& other, Scalar alpha) { inplace_binary_op(BinaryOp::Sub, self, other, alpha); }
void mul_(const Tensor& self, const Tensor& other) { inplace_binary_op(BinaryOp::Mul, self, other); }
void div_(const Tensor& self, const Tensor& other) { inplace_binary_op(BinaryOp::Div, self, other); }

}  // namespace ember::native
