// core/tensor_iterator.cpp — builds StridedPlans (the steps are explained in tensor_iterator.h).
#include <ember/core/tensor_iterator.h>

#include <array>
#include <cstddef>
#include <memory_resource>

namespace ember {

Shape broadcast_shape_of(const std::vector<Tensor>& tensors) {
  Shape shape;
  for (const Tensor& tensor : tensors) shape = broadcast_shapes(shape, tensor.sizes());
  return shape;
}

namespace {

// Scratch lists of the plan builder. Every op builds a plan, so they live in a buffer on
// the stack (enough for tensors of up to about 100 dims); only beyond that does the
// memory resource fall back to the heap. Without it the lists below were a dozen small
// heap allocations per op — a third of the cost of a 1-element add (docs/performance.md).
constexpr std::size_t kScratchBytes = 4096;
template <class T>
using ScratchVector = std::pmr::vector<T>;

// Operand k's stride for each of the output's dims, in the output's dim order (outermost
// first, as in Tensor::strides()). Step 1 of the header: broadcast dims get stride 0.
void broadcast_strides(const Tensor& operand, const Shape& out_sizes, ScratchVector<std::int64_t>& strides) {
  const std::size_t out_ndim = out_sizes.size();
  const std::size_t ndim = static_cast<std::size_t>(operand.dim());
  EMBER_CHECK(ndim <= out_ndim, ShapeError, "output with shape ", shape_to_string(out_sizes),
              " doesn't match the broadcast shape ", shape_to_string(broadcast_shapes(out_sizes, operand.sizes())));
  strides.assign(out_ndim, 0);
  const std::size_t lead = out_ndim - ndim;  // missing leading dims read like size 1
  for (std::size_t d = 0; d < ndim; ++d) {
    std::int64_t size = operand.sizes()[d];
    std::int64_t out_size = out_sizes[lead + d];
    if (size == out_size) {
      strides[lead + d] = operand.strides()[d];
    } else {
      // Only a size-1 dim may be stretched; anything else is a caller's mistake.
      EMBER_CHECK(size == 1, ShapeError, "output with shape ", shape_to_string(out_sizes),
                  " doesn't match the broadcast shape ",
                  shape_to_string(broadcast_shapes(out_sizes, operand.sizes())));
      strides[lead + d] = 0;
    }
  }
}

}  // namespace

void check_no_internal_overlap(const Tensor& output) {
  for (std::int64_t d = 0; d < output.dim(); ++d) {
    EMBER_CHECK(output.sizes()[d] <= 1 || output.strides()[d] != 0, ValueError,
                "unsupported operation: more than one element of the written-to tensor refers to a single memory "
                "location. Please clone() the tensor before performing the operation.");
  }
}

namespace {

// True when the elements fill a block of memory exactly once, in some order of the dims
// (a contiguous tensor, its transpose, any permutation of one). Size-1 dims never step.
bool is_non_overlapping_and_dense(const Tensor& tensor) {
  std::array<std::int64_t, kMaxDims> sizes{}, strides{};  // the dims that step, by stride
  std::size_t count = 0;
  for (std::int64_t d = 0; d < tensor.dim(); ++d) {
    if (tensor.sizes()[d] == 1) continue;
    if (count == sizes.size()) return false;  // too many dims to tell: treat as "too hard"
    // Insertion by stride keeps this allocation-free; tensors have a handful of dims.
    std::size_t at = count++;
    for (; at > 0 && strides[at - 1] > tensor.strides()[d]; --at) {
      sizes[at] = sizes[at - 1];
      strides[at] = strides[at - 1];
    }
    sizes[at] = tensor.sizes()[d];
    strides[at] = tensor.strides()[d];
  }
  std::int64_t expected = 1;
  for (std::size_t i = 0; i < count; ++i) {
    if (strides[i] != expected) return false;
    expected *= sizes[i];
  }
  return true;
}

}  // namespace

MemoryOverlap memory_overlap(const Tensor& a, const Tensor& b) {
  if (a.is_same(b)) return MemoryOverlap::Full;
  if (a.numel() == 0 || b.numel() == 0) return MemoryOverlap::No;
  if (a.storage().get() != b.storage().get()) return MemoryOverlap::No;
  if (!is_non_overlapping_and_dense(a) || !is_non_overlapping_and_dense(b)) return MemoryOverlap::TooHard;
  // Dense layouts occupy [begin, end) exactly, so the byte ranges decide.
  const auto begin_a = a.storage_offset() * static_cast<std::int64_t>(a.element_size());
  const auto begin_b = b.storage_offset() * static_cast<std::int64_t>(b.element_size());
  const auto end_a = begin_a + a.numel() * static_cast<std::int64_t>(a.element_size());
  const auto end_b = begin_b + b.numel() * static_cast<std::int64_t>(b.element_size());
  if (begin_a == begin_b && end_a == end_b) {
    return a.strides() == b.strides() ? MemoryOverlap::Full : MemoryOverlap::Partial;
  }
  return begin_a < end_b && begin_b < end_a ? MemoryOverlap::Partial : MemoryOverlap::No;
}

void check_no_partial_overlap(const Tensor& written, const Tensor& input) {
  EMBER_CHECK(memory_overlap(written, input) != MemoryOverlap::Partial, ValueError,
              "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single "
              "memory location. Please clone() the tensor before performing the operation.");
}

namespace {

// The operands' first elements, dtypes and device, whichever way the plan's dims were found.
void set_operands(StridedPlan& plan, const Tensor& output, std::span<const Tensor> inputs) {
  plan.data[0] = output.data_ptr();
  plan.dtypes[0] = output.dtype();
  plan.device = output.device().index();  // every operand is on this device (checked by the caller)
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    plan.data[i + 1] = inputs[i].data_ptr();
    plan.dtypes[i + 1] = inputs[i].dtype();
  }
}

// Every operand contiguous with the output's sizes: the usual elementwise op on fresh
// tensors (a ReLU, its backward, an add), whose plan steps 2-5 below would coalesce into one
// dim of numel elements at stride 1 (no dim for a single element). Decided directly.
bool all_contiguous_alike(const Tensor& output, std::span<const Tensor> inputs) {
  if (!output.is_contiguous()) return false;
  for (const Tensor& input : inputs) {
    if (!(IntArrayRef(input.sizes()) == IntArrayRef(output.sizes())) || !input.is_contiguous()) return false;
  }
  return true;
}

}  // namespace

StridedPlan make_strided_plan(const Tensor& output, std::span<const Tensor> inputs) {
  EMBER_CHECK(inputs.size() + 1 <= static_cast<std::size_t>(kMaxOperands), ValueError,
              "make_strided_plan: at most ", kMaxOperands - 1, " inputs, got ", inputs.size());
  for (const Tensor& input : inputs) {
    // Cheap for the usual fresh output: different storages end the test at once.
    if (input.storage().get() == output.storage().get()) check_no_partial_overlap(output, input);
  }
  StridedPlan plan;
  plan.num_operands = static_cast<int>(inputs.size()) + 1;
  plan.numel = output.numel();
  if (plan.numel > 0 && all_contiguous_alike(output, inputs)) {
    if (plan.numel > 1) {
      plan.ndim = 1;
      plan.sizes[0] = plan.numel;
      for (int k = 0; k < plan.num_operands; ++k) plan.strides[k][0] = 1;
    }
    set_operands(plan, output, inputs);
    plan.contiguous = true;
    return plan;
  }

  std::array<std::byte, kScratchBytes> scratch;
  std::pmr::monotonic_buffer_resource arena(scratch.data(), scratch.size());
  const Shape& out_sizes = output.sizes();
  std::array<ScratchVector<std::int64_t>, kMaxOperands> strides{  // [operand][output dim]
      ScratchVector<std::int64_t>(&arena), ScratchVector<std::int64_t>(&arena), ScratchVector<std::int64_t>(&arena),
      ScratchVector<std::int64_t>(&arena)};
  strides[0].assign(output.strides().begin(), output.strides().end());
  for (std::size_t i = 0; i < inputs.size(); ++i) broadcast_strides(inputs[i], out_sizes, strides[i + 1]);

  // Step 2: keep only dims that actually move (size != 1). Listing them last-dim-first gives
  // the row-major order (innermost first) as the starting point.
  ScratchVector<int> dims(&arena);
  dims.reserve(out_sizes.size());
  for (int d = static_cast<int>(out_sizes.size()) - 1; d >= 0; --d) {
    if (out_sizes[d] != 1) dims.push_back(d);
  }
  // Step 3: the output's smallest stride first. A stable insertion sort keeps row-major
  // order on ties; the lists are a handful of dims long, and std::stable_sort would take
  // a heap buffer.
  for (std::size_t i = 1; i < dims.size(); ++i) {
    const int dim = dims[i];
    std::size_t j = i;
    for (; j > 0 && strides[0][dim] < strides[0][dims[j - 1]]; --j) dims[j] = dims[j - 1];
    dims[j] = dim;
  }

  // Step 4: coalesce, walking from the innermost dim outwards, straight into the plan.
  int ndim = 0;
  for (int d : dims) {
    bool merge = ndim > 0;
    for (int k = 0; merge && k < plan.num_operands; ++k) {
      merge = strides[k][d] == plan.strides[k][ndim - 1] * plan.sizes[ndim - 1];
    }
    if (merge) {
      plan.sizes[ndim - 1] *= out_sizes[d];  // the inner dim keeps its stride and just gets longer
      continue;
    }
    EMBER_CHECK(ndim < kMaxDims, ValueError, "elementwise ops support at most ", kMaxDims,
                " dimensions after coalescing, got more");
    plan.sizes[ndim] = out_sizes[d];
    for (int k = 0; k < plan.num_operands; ++k) plan.strides[k][ndim] = strides[k][d];
    ++ndim;
  }
  plan.ndim = ndim;
  set_operands(plan, output, inputs);

  // Step 5: the fast path: at most one dim left and every operand walks it with stride 1.
  plan.contiguous = plan.ndim == 0;
  if (plan.ndim == 1) {
    plan.contiguous = true;
    for (int k = 0; k < plan.num_operands; ++k) plan.contiguous = plan.contiguous && plan.strides[k][0] == 1;
  }
  return plan;
}

StridedPlan make_strided_plan(const Tensor& output, std::initializer_list<Tensor> inputs) {
  return make_strided_plan(output, std::span<const Tensor>(inputs.begin(), inputs.size()));
}

StridedPlan make_strided_plan(const Tensor& output, const std::vector<Tensor>& inputs) {
  return make_strided_plan(output, std::span<const Tensor>(inputs));
}

}  // namespace ember
