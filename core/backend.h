// core/backend.h — the interface a device implements: CPU always, CUDA when built.
//
// native:: functions (core/native.h) check arguments, allocate outputs, describe the work
// as plain plans (core/strided_index.h) and call backend_for(device).<op>(plan). A backend
// only computes; it never checks user input. CPU: core/cpu/cpu_backend.cpp. CUDA:
// cuda/cuda_backend.cpp, registered at start-up when ember_cuda is linked.
//
// Adding an elementwise op = a new enum value here + one functor per backend
// (docs/adding-an-op.md walks through it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <ember/core/device.h>
#include <ember/core/fused_plans.h>
#include <ember/core/scalar.h>
#include <ember/core/strided_index.h>

namespace ember {

enum class UnaryOp {
  Neg, Exp, Log, Sqrt, Abs, Sign, Sigmoid, Tanh, Relu,
  Clamp,      // params.low/high with has_low/has_high
  PowScalar,  // params.exponent
};

struct UnaryParams {
  double low = 0.0, high = 0.0;
  // The same bounds as integers, for integral tensors: a double holds integers exactly only
  // up to 2^53. native::clamp keeps them inside the tensor dtype's range.
  std::int64_t low_int = 0, high_int = 0;
  bool has_low = false, has_high = false;
  double exponent = 1.0;

  // A clamp bound as the element type T (exact for integers).
  template <class T>
  T low_as() const { return bound_as<T>(low, low_int); }
  template <class T>
  T high_as() const { return bound_as<T>(high, high_int); }

 private:
  template <class T>
  static T bound_as(double as_double, std::int64_t as_int) {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) return static_cast<T>(as_int);
    else return static_cast<T>(as_double);
  }
};

enum class BinaryOp {
  Add,  // out = a + alpha * b
  Sub,  // out = a - alpha * b
  Mul, Div, Pow, Maximum, Minimum,
  // ReLU's backward, PyTorch's threshold_backward(grad, result, 0): out = b <= 0 ? 0 : a
  // with a = the incoming gradient, b = relu's result (NaN in b lets the gradient pass).
  ReluBackward,
  Eq, Ne, Lt, Le, Gt, Ge,   // output dtype Bool
  LogicalAnd,               // output dtype Bool
};

inline bool is_comparison(BinaryOp op) { return op >= BinaryOp::Eq; }

enum class ReduceOp { Sum, Mean, Prod, Max, Min, ArgMax, ArgMin };

// Random fills generated on the device by a counter-based generator (Philox4x32-10, as
// PyTorch's CUDA generator; cuda/kernels/philox.cuh). The scheme is PyTorch's seed + offset:
// the key is the generator's seed, and element e of the fill (in the plan's order) uses
// Philox counter `offset + e / 2` — two values per counter — so a fill of n elements
// consumes philox_counters(n) counters, which core/random.cpp reserves from the generator
// (Generator::reserve_philox_counters) before the launch. Same seed, same calls: same bits.
enum class RandomDistribution {
  Uniform,    // [a, b)
  Normal,     // mean a, standard deviation b (Box–Muller)
  Bernoulli,  // 1 with probability a, else 0 (any dtype)
};
struct PhiloxFill {
  std::uint64_t seed = 0;
  std::uint64_t offset = 0;   // first Philox counter of this fill
  RandomDistribution distribution = RandomDistribution::Uniform;
  double a = 0.0, b = 1.0;
};
constexpr std::int64_t kPhiloxValuesPerCounter = 2;
inline std::uint64_t philox_counters(std::int64_t numel) {
  return static_cast<std::uint64_t>((numel + kPhiloxValuesPerCounter - 1) / kPhiloxValuesPerCounter);
}

class Backend {
 public:
  virtual ~Backend() = default;

  // plan operands: [out]. Writes value (cast to out's dtype) everywhere.
  virtual void fill(const StridedPlan& plan, Scalar value) = 0;
  // plan operands: [dst, src], same device; dtypes may differ (the copy casts).
  virtual void copy(const StridedPlan& plan) = 0;
  // Raw byte copy between any two devices, at least one of them this backend's.
  virtual void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, std::size_t nbytes) = 0;
  // The same, but may return before the bytes have arrived (to(device, non_blocking=true)
  // from pinned memory). Ordered with this backend's later work; default: copy_bytes.
  virtual void copy_bytes_async(void* dst, Device dst_device, const void* src, Device src_device, std::size_t nbytes) {
    copy_bytes(dst, dst_device, src, src_device, nbytes);
  }

  // plan operands: [out, in], both of one dtype.
  virtual void unary(UnaryOp op, const StridedPlan& plan, const UnaryParams& params) = 0;
  // plan operands: [out, a, b]; a and b share a dtype; out has it too, or Bool for
  // comparisons. alpha only for Add/Sub.
  virtual void binary(BinaryOp op, const StridedPlan& plan, Scalar alpha) = 0;
  // plan operands: [out, condition (Bool), a, b]; out, a, b share a dtype.
  virtual void where(const StridedPlan& plan) = 0;

  virtual void reduce(ReduceOp op, const ReducePlan& plan) = 0;
  virtual void softmax(const SoftmaxPlan& plan, bool log) = 0;
  virtual void gemm(const GemmPlan& plan) = 0;

  // addmm's bias: true when gemm() honours GemmPlan::bias (its epilogue reads the broadcast
  // bias in place); otherwise core/linalg.cpp copies the bias into C first.
  virtual bool gemm_reads_bias() const { return false; }

  // plan operands: [out]. Fills out with Philox numbers (see PhiloxFill). Device backends
  // only: the CPU draws from its mt19937 stream in core/random.cpp (PyTorch's CPU bits).
  virtual void random_fill(const StridedPlan& plan, const PhiloxFill& fill);

  virtual void index_select(const IndexPlan& plan) = 0;
  virtual void index_add(const IndexPlan& plan) = 0;   // output already holds self
  virtual void gather(const IndexPlan& plan) = 0;
  virtual void scatter_add(const IndexPlan& plan) = 0; // output already holds self

  // Fused training ops (core/fused_plans.h; docs/performance.md "Fused ops").
  virtual void cross_entropy(const CrossEntropyPlan& plan) = 0;
  virtual void sgd_step(const SgdPlan& plan) = 0;
  virtual void one_hot(const OneHotPlan& plan) = 0;
};

// The backend that serves a device type; DeviceError when none is registered
// ("Torch not compiled with CUDA enabled").
Backend& backend_for(DeviceType type);
inline Backend& backend_for(Device device) { return backend_for(device.type()); }
void register_backend(DeviceType type, Backend* backend);

}  // namespace ember
