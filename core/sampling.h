// core/sampling.h — drawing from distributions that text generation needs: exponential_ and
// multinomial, bit for bit PyTorch's CPU results after the same manual_seed.
//
// Issue 21. Sampling a token is multinomial(softmax(logits / temperature), 1), and PyTorch
// draws that as argmax(p / q) with q ~ Exp(1) (the "exponential race", a Gumbel-max in
// disguise), so both ops sit on the mt19937 stream of core/random.h and use its Generator.
// topk (top-k filtering) is differentiable and lives with the autograd ops
// (ember::topk, autograd/ops.h).
#pragma once

#include <cstdint>

#include <ember/core/random.h>
#include <ember/core/tensor.h>

namespace ember {

// Tensor.exponential_(lambd): every element an Exp(lambda) sample, -1/lambda · log1p(-u) for a
// uniform double u in [0, 1) (53 bits, one random64() per element, in memory order), rounded
// to the tensor's dtype. Floating tensors only. A tensor on a GPU is sampled on the CPU from
// the same stream and copied over (so it gets the CPU's values), unlike uniform_/normal_'s
// device Philox fills. Bumps the version counter.
// Errors: lambda <= 0 or NaN: "exponential_ expects lambda > 0.0, but found lambda=-1";
// integer dtype: "Exponential distribution is a continuous probability distribution. dtype
// must be a floating point but you specified Long".
void exponential_(const Tensor& self, double lambda = 1.0, Generator* generator = nullptr);

// torch.multinomial: num_samples category indices (int64) per row of probs ([C] -> [n],
// [R, C] -> [R, n]), drawn with probability proportional to the (unnormalised, non-negative)
// weights. PyTorch's CPU algorithms, so the same seed gives the same indices:
//   * num_samples == 1 or without replacement: q = empty_like(probs).exponential_(1) (laid
//     out as PyTorch's empty_like: probs' strides when dense, else dense strides in probs'
//     order of dims, so a transposed or sliced probs fills q in the same order), then
//     argmax(probs / q) or the num_samples largest of probs / q (topk, sorted);
//   * with replacement and several samples: per row, the running sum of the weights divided
//     by the total (its last entry set to 1), and for each sample a uniform double found by
//     binary search (the first entry >= u).
// Without replacement, a row with fewer non-zero weights than num_samples gets zero-weight
// categories after its non-zero ones, as in PyTorch. Tensors on a GPU are copied to the CPU,
// sampled there and the indices copied back. Errors (PyTorch's wording): "prob_dist must be 1
// or 2 dim", "multinomial only supports floating-point dtypes for input, got: Long",
// "cannot sample n_sample <= 0 samples", "cannot sample n_sample > prob_dist.size(-1)
// samples without replacement", "probability tensor contains either `inf`, `nan` or element
// < 0", "invalid multinomial distribution (sum of probabilities <= 0)" and, on the
// replacement path, "invalid multinomial distribution (encountering probability entry < 0)"
// / "(encountering probability entry = infinity or NaN)".
Tensor multinomial(const Tensor& probs, std::int64_t num_samples, bool replacement = false,
                   Generator* generator = nullptr);

}  // namespace ember
