// core/random.h — random numbers, bit for bit the same as PyTorch's CPU generator.
//
// Tutorial §5: torch.manual_seed(123) then NeuralNetwork(50, 3) gives -0.0577, 0.0047, ...
// PyTorch's CPU generator is an mt19937 seeded with the seed; its float32 uniform takes
// the low 24 bits of one 32-bit draw times 2^-24; normal_ uses Box–Muller with different
// paths for tensors of fewer than 16 and of 16 or more elements. ember reproduces each
// path (core/random.cpp explains them), bfloat16 and float16 ones included (PyTorch 2.15's
// rules, on the CPU). Tensors on a GPU are filled on the device by Philox (rand, randn,
// uniform_, normal_, bernoulli_ and so dropout): reproducible under manual_seed, not
// bit-identical to PyTorch's CUDA generator (docs/cuda.md); 16-bit ones are refused there.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include <ember/core/tensor.h>

namespace ember {

class Generator {
 public:
  explicit Generator(std::uint64_t seed = 67280421310721ULL);  // PyTorch's default seed
  void manual_seed(std::uint64_t seed);
  std::uint64_t initial_seed() const { return seed_; }

  std::uint32_t random();     // next 32 bits of mt19937
  std::uint64_t random64();   // two draws combined as PyTorch does
  // Box–Muller keeps the second value of a pair (PyTorch's next_double_normal_sample).
  std::optional<double> take_cached_normal();
  void cache_normal(double value);

  // Philox counters for random fills of device tensors (core/backend.h, PhiloxFill):
  // PyTorch's CUDA "seed + offset" scheme. A device fill of n values uses key = seed and
  // counters [offset, offset + philox_counters(n)), then the offset moves past them;
  // manual_seed resets it to 0. The mt19937 stream above is never touched by device fills,
  // so CPU results (and CPU-side model init) are the same whatever ran on a GPU.
  // Returns the first reserved counter. Callers hold mutex().
  std::uint64_t reserve_philox_counters(std::uint64_t count);
  std::uint64_t philox_offset() const { return philox_offset_; }

  // Full state (for checkpoints: `ember train --resume` continues the same stream), the
  // Philox offset included.
  std::vector<std::uint8_t> get_state() const;
  void set_state(const std::vector<std::uint8_t>& state);

  std::mutex& mutex() { return mutex_; }

 private:
  struct Mt19937;
  std::uint64_t seed_;
  std::shared_ptr<Mt19937> engine_;
  std::optional<double> cached_normal_;
  std::uint64_t philox_offset_ = 0;
  std::mutex mutex_;
};

Generator& default_generator();
void manual_seed(std::uint64_t seed);

// Factories. generator == nullptr means the default generator.
Tensor rand(IntArrayRef sizes, TensorOptions options = {}, Generator* generator = nullptr);
Tensor randn(IntArrayRef sizes, TensorOptions options = {}, Generator* generator = nullptr);
Tensor randint(std::int64_t low, std::int64_t high, IntArrayRef sizes, TensorOptions options = {},
               Generator* generator = nullptr);  // dtype int64 unless given
Tensor randperm(std::int64_t n, TensorOptions options = {}, Generator* generator = nullptr);
Tensor rand_like(const Tensor& other, Generator* generator = nullptr);
Tensor randn_like(const Tensor& other, Generator* generator = nullptr);

// In place, as Tensor.uniform_ etc. They bump the version counter.
void uniform_(const Tensor& self, double from = 0.0, double to = 1.0, Generator* generator = nullptr);
void normal_(const Tensor& self, double mean = 0.0, double std = 1.0, Generator* generator = nullptr);
// random_(): uniform over [0, 2^mantissa] for floats / the full positive range for ints.
void random_(const Tensor& self, Generator* generator = nullptr);
void random_(const Tensor& self, std::int64_t from, std::optional<std::int64_t> to, Generator* generator = nullptr);
void bernoulli_(const Tensor& self, double p, Generator* generator = nullptr);

}  // namespace ember
