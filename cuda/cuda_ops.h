// cuda/cuda_ops.h — the host entry points of the kernels, one per Backend method.
//
// Declared in plain C++ so cuda_backend.cpp (compiled by the host compiler) can call them;
// defined in the .cu files, each a thin wrapper around a dispatch function in
// cuda/kernels/*.cuh (the same functions the emulator tests run on the CPU).
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include <ember/core/backend.h>

namespace ember::cuda::ops {

void fill(const StridedPlan& plan, Scalar value, cudaStream_t stream);        // cuda_elementwise.cu
void copy(const StridedPlan& plan, cudaStream_t stream);                      // cuda_elementwise.cu
void where(const StridedPlan& plan, cudaStream_t stream);                     // cuda_elementwise.cu
void unary(UnaryOp op, const StridedPlan& plan, const UnaryParams& params, cudaStream_t stream);  // cuda_unary.cu
void binary(BinaryOp op, const StridedPlan& plan, Scalar alpha, cudaStream_t stream);             // cuda_binary.cu
void reduce(ReduceOp op, const ReducePlan& plan, cudaStream_t stream);        // cuda_reduce.cu
void softmax(const SoftmaxPlan& plan, bool log, cudaStream_t stream);         // cuda_reduce.cu
void gemm_ember(const GemmPlan& plan, cudaStream_t stream);                   // cuda_gemm.cu
// cuBLAS; returns false (doing nothing) when the strides have no cuBLAS layout.
bool gemm_cublas(const GemmPlan& plan, cudaStream_t stream);                  // cuda_gemm.cu
void index_select(const IndexPlan& plan, cudaStream_t stream);                // cuda_index.cu
void index_add(const IndexPlan& plan, cudaStream_t stream);
void gather(const IndexPlan& plan, cudaStream_t stream);
void scatter_add(const IndexPlan& plan, cudaStream_t stream);
void cross_entropy(const CrossEntropyPlan& plan, cudaStream_t stream);           // cuda_fused.cu
void sgd_step(const SgdPlan& plan, cudaStream_t stream);
void one_hot(const OneHotPlan& plan, cudaStream_t stream);
// Philox fill of plan operand 0, any layout (core/backend.h, PhiloxFill).
void random_fill(const StridedPlan& plan, const PhiloxFill& fill, cudaStream_t stream);  // cuda_index.cu

}  // namespace ember::cuda::ops
