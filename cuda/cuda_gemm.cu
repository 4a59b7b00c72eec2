// cuda/cuda_gemm.cu — GPU GEMM entry points: ember's tiled kernel and the cuBLAS yardstick.
//
// ember's kernels (cuda/kernels/gemm.cuh, gemm_fast.cuh for large float32 products,
// gemm_tensor_core.cuh for bfloat16 and float16) take any strides. cuBLAS only takes column-major
// matrices with a leading dimension, optionally transposed; gemm_cublas maps the plan's
// strides onto that when it can (row-major C is computed as Cᵀ = Bᵀ·Aᵀ) and declines
// otherwise, so ember's kernel runs instead. Both honour GemmPlan::bias, so the one entry
// point serves gemm_kernel and addmm_kernel (core/backend.h). Select cuBLAS with
// ember::cuda::set_matmul_backend(MatmulBackend::Cublas).
#include <cublas_v2.h>

#include <mutex>
#include <string>
#include <vector>

#include <ember/core/backend.h>
#include <ember/core/dispatch.h>
#include <ember/cuda/cuda_context.h>
#include <ember/cuda/kernels/gemm.cuh>
#include <ember/cuda/kernels/gemm_fast.cuh>
#include <ember/cuda/kernels/gemm_tensor_core.cuh>

namespace ember::cuda {

namespace {

void check_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw CudaError(make_message("cuBLAS error: ", cublasGetStatusString(status), " (", call, " at ", file, ":", line, ")"));
}
#define EMBER_CUBLAS_CHECK(call) check_cublas((call), #call, __FILE__, __LINE__)

// One handle per device, created on first use (creating one costs milliseconds).
cublasHandle_t handle_for_current_device() {
  static std::mutex mutex;
  static std::vector<cublasHandle_t> handles;
  int device = 0;
  EMBER_CUDA_CHECK(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(mutex);
  if (handles.size() <= static_cast<std::size_t>(device)) handles.resize(device + 1, nullptr);
  if (handles[device] == nullptr) EMBER_CUBLAS_CHECK(cublasCreate(&handles[device]));
  return handles[device];
}

// A rows×cols matrix with strides (rs, cs) as cuBLAS sees it: a column-major matrix with
// leading dimension ld, used as is (N) or transposed (T). False when neither fits.
bool as_column_major(std::int64_t rows, std::int64_t cols, std::int64_t rs, std::int64_t cs, cublasOperation_t& op,
                     int& ld) {
  if (rows == 1) rs = 1;  // a single row: its row stride is never used
  if (cols == 1) cs = 1;
  const std::int64_t max_rows = rows > 1 ? rows : 1, max_cols = cols > 1 ? cols : 1;
  if (rs == 1) {
    const std::int64_t lead = cols == 1 ? max_rows : cs;
    if (lead < max_rows || lead > INT32_MAX) return false;
    op = CUBLAS_OP_N;
    ld = static_cast<int>(lead);
    return true;
  }
  if (cs == 1) {
    const std::int64_t lead = rows == 1 ? max_cols : rs;
    if (lead < max_cols || lead > INT32_MAX) return false;
    op = CUBLAS_OP_T;
    ld = static_cast<int>(lead);
    return true;
  }
  return false;
}

template <class T>
void strided_batched(cublasHandle_t handle, cublasOperation_t op_a, cublasOperation_t op_b, int m, int n, int k,
                     T alpha, const T* a, int lda, long long stride_a, const T* b, int ldb, long long stride_b, T beta,
                     T* c, int ldc, long long stride_c, int batch) {
  if constexpr (sizeof(T) == 4) {
    EMBER_CUBLAS_CHECK(cublasSgemmStridedBatched(handle, op_a, op_b, m, n, k, &alpha, a, lda, stride_a, b, ldb, stride_b,
                                                 &beta, c, ldc, stride_c, batch));
  } else {
    EMBER_CUBLAS_CHECK(cublasDgemmStridedBatched(handle, op_a, op_b, m, n, k, &alpha, a, lda, stride_a, b, ldb, stride_b,
                                                 &beta, c, ldc, stride_c, batch));
  }
}

// cuBLAS reads its addend from C only: an addmm bias (plan.bias) is first written into C
// with one strided copy (the broadcast row repeated), which ember's own kernel avoids.
void copy_bias_into_c(const GemmPlan& p, cudaStream_t stream) {
  StridedPlan copy;
  copy.ndim = 3;
  copy.num_operands = 2;
  copy.numel = p.batch * p.m * p.n;
  const std::int64_t sizes[3] = {p.n, p.m, p.batch};  // innermost first
  const std::int64_t c_strides[3] = {p.col_stride_c, p.row_stride_c, p.batch_stride_c};
  const std::int64_t bias_strides[3] = {p.col_stride_bias, p.row_stride_bias, p.batch_stride_bias};
  for (int d = 0; d < 3; ++d) {
    copy.sizes[d] = sizes[d];
    copy.strides[0][d] = c_strides[d];
    copy.strides[1][d] = bias_strides[d];
  }
  copy.data[0] = p.c;
  copy.data[1] = const_cast<void*>(p.bias);
  copy.dtypes[0] = copy.dtypes[1] = p.dtype;
  copy.device = p.device;
  (void)stream;  // the copy runs on the same device and stream
  ::ember::copy_kernel(Device(DeviceType::CUDA, p.device), copy);
}

template <class T>
bool gemm_cublas_typed(const GemmPlan& p, cudaStream_t stream) {
  if (p.m > INT32_MAX || p.n > INT32_MAX || p.k > INT32_MAX || p.batch > INT32_MAX || p.k == 0) return false;
  cublasOperation_t op_c, op_x, op_y;
  int ldc, ldx, ldy;
  // Column-major C: C = op(A)·op(B). Row-major C: Cᵀ (n×m, column-major) = Bᵀ·Aᵀ.
  const bool column_major = as_column_major(p.m, p.n, p.row_stride_c, p.col_stride_c, op_c, ldc) &&
                            op_c == CUBLAS_OP_N && as_column_major(p.m, p.k, p.row_stride_a, p.col_stride_a, op_x, ldx) &&
                            as_column_major(p.k, p.n, p.row_stride_b, p.col_stride_b, op_y, ldy);
  const bool row_major = !column_major && as_column_major(p.n, p.m, p.col_stride_c, p.row_stride_c, op_c, ldc) &&
                         op_c == CUBLAS_OP_N && as_column_major(p.n, p.k, p.col_stride_b, p.row_stride_b, op_x, ldx) &&
                         as_column_major(p.k, p.m, p.col_stride_a, p.row_stride_a, op_y, ldy);
  if (!column_major && !row_major) return false;
  if (p.bias != nullptr && p.beta != 0.0) copy_bias_into_c(p, stream);
  const T alpha = static_cast<T>(p.alpha), beta = static_cast<T>(p.beta);
  cublasHandle_t handle = handle_for_current_device();
  EMBER_CUBLAS_CHECK(cublasSetStream(handle, stream));
  if (column_major) {
    strided_batched<T>(handle, op_x, op_y, int(p.m), int(p.n), int(p.k), alpha, static_cast<const T*>(p.a), ldx,
                       p.batch_stride_a, static_cast<const T*>(p.b), ldy, p.batch_stride_b, beta, static_cast<T*>(p.c),
                       ldc, p.batch_stride_c, int(p.batch));
  } else {
    strided_batched<T>(handle, op_x, op_y, int(p.n), int(p.m), int(p.k), alpha, static_cast<const T*>(p.b), ldx,
                       p.batch_stride_b, static_cast<const T*>(p.a), ldy, p.batch_stride_a, beta, static_cast<T*>(p.c),
                       ldc, p.batch_stride_c, int(p.batch));
  }
  return true;
}

// cuBLAS; false (having done nothing) when the strides have no cuBLAS layout.
bool gemm_cublas(const GemmPlan& plan, cudaStream_t stream) {
  if (plan.batch == 0 || plan.m == 0 || plan.n == 0) return true;
  if (plan.dtype == DType::Float32) return gemm_cublas_typed<float>(plan, stream);
  if (plan.dtype == DType::Float64) return gemm_cublas_typed<double>(plan, stream);
  return false;
}

// cuBLAS when selected and the strides fit its layouts; ember's kernels otherwise: the
// tensor-core one (gemm_tensor_core.cuh) for bfloat16 and float16, the fast one
// (gemm_fast.cuh) for large float32 products, the reading one (gemm.cuh) for the rest.
void gemm_on_gpu(const GemmPlan& plan) {
  DeviceGuard guard(plan.device);
  if (is_reduced_floating_point(plan.dtype)) {  // sent only where gemm_reads_16_bit_on_gpu says yes
    kernels::dispatch_gemm_tensor_core(plan, current_stream());
    return;
  }
  const MatmulBackend backend = selected_matmul_backend();
  if (backend == MatmulBackend::Cublas && gemm_cublas(plan, current_stream())) return;
  if (backend == MatmulBackend::EmberSimple) kernels::dispatch_gemm(plan, current_stream());
  else kernels::dispatch_gemm_auto(plan, current_stream());
}

// The capability core/linalg.cpp asks before a 16-bit product (core/backend.h): bfloat16 and
// float16 run on the tensor cores (gemm_tensor_core.cuh), whose bfloat16 mma needs sm_80 or
// later; the current device decides. Elsewhere the operands are widened to float32.
bool gemm_reads_16_bit_on_gpu(DType dtype) {
  if (!is_reduced_floating_point(dtype)) return false;
  int device = 0, major = 0;
  EMBER_CUDA_CHECK(cudaGetDevice(&device));
  EMBER_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  return major >= 8;
}

}  // namespace

EMBER_REGISTER_KERNEL(::ember::gemm_kernel, CUDA, gemm_on_gpu);
EMBER_REGISTER_KERNEL(::ember::gemm_reads_16_bit_kernel, CUDA, gemm_reads_16_bit_on_gpu);
EMBER_REGISTER_KERNEL(::ember::addmm_kernel, CUDA, gemm_on_gpu);

}  // namespace ember::cuda
