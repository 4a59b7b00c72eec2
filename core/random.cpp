// core/random.cpp — PyTorch's CPU random number generator, reproduced bit for bit: the
// engine (mt19937), its saved state and the default generator. Drawing tensors from it
// (the distributions, the in-place samplers, the random factories) is core/random_tensors.cpp.
//
// How it fits: core/random.h declares the Generator and the random factories (rand, randn,
// randint, randperm) and in-place samplers (uniform_, normal_, random_, bernoulli_). nn's
// initialisers (§5 of the tutorial: torch.manual_seed(123) then nn.Linear) and data's
// DataLoader shuffling sit on top of these, so matching PyTorch here is what lets ember
// print the very numbers the tutorial prints.
//
// The rules both files follow, worked out by comparing against PyTorch's CPU output (1.13,
// then 2.15; tests/reference/gen_random.py writes the reference, tests/core/test_random.cpp
// checks it):
//   * the engine is the standard 32-bit Mersenne Twister (mt19937) seeded with the seed;
//   * random64() joins two draws, the first one being the high 32 bits;
//   * float32 uniforms use the low 24 bits of one draw, float64 the low 53 bits of random64();
//   * integers in a range take one 32-bit draw modulo the range, or random64() from a range
//     of 2^28 on (random_ in random_tensors.cpp);
//   * normal samples have two paths (normal_ in random_tensors.cpp), one of which mirrors
//     the AVX2 polynomial approximations of log/sin/cos that PyTorch's x86 build uses;
//   * bfloat16 and float16 (issue 22) draw as float32 does and round each value once, with
//     two twists measured against PyTorch 2.15: uniform_ never returns `to` (a value that
//     rounds up to it becomes `from`), and normal_'s block path draws 16 fresh uniforms per
//     block of 16.
// Tensors on a GPU do not use this stream: uniform_, normal_ and bernoulli_ on them (and so
// rand, randn, dropout) run the device's Philox kernel with the generator's seed and a
// counter offset reserved from it (fill_on_device in random_tensors.cpp; core/backend.h,
// PhiloxFill).
#include <ember/core/random.h>

#include <array>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace ember {

// ====================================================================== the engine

// The Mersenne Twister MT19937 (Matsumoto & Nishimura, 1998): 624 words of state,
// regenerated in one "twist" every 624 outputs, each output "tempered" by shifts and masks.
struct Generator::Mt19937 {
  static constexpr int kStateSize = 624;
  static constexpr int kShift = 397;
  std::array<std::uint32_t, kStateSize> state{};
  int index = kStateSize;  // next word to hand out; kStateSize = twist first

  void seed(std::uint64_t seed) {
    // Only the low 32 bits take part, as in every mt19937 implementation.
    state[0] = static_cast<std::uint32_t>(seed & 0xffffffffULL);
    for (int i = 1; i < kStateSize; ++i) {
      state[i] = 1812433253U * (state[i - 1] ^ (state[i - 1] >> 30)) + static_cast<std::uint32_t>(i);
    }
    index = kStateSize;
  }

  void twist() {
    for (int i = 0; i < kStateSize; ++i) {
      std::uint32_t upper_and_lower = (state[i] & 0x80000000U) | (state[(i + 1) % kStateSize] & 0x7fffffffU);
      std::uint32_t next = state[(i + kShift) % kStateSize] ^ (upper_and_lower >> 1);
      if (upper_and_lower & 1U) next ^= 0x9908b0dfU;
      state[i] = next;
    }
    index = 0;
  }

  std::uint32_t next() {
    if (index >= kStateSize) twist();
    std::uint32_t y = state[index++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680U;
    y ^= (y << 15) & 0xefc60000U;
    y ^= y >> 18;
    return y;
  }
};

Generator::Generator(std::uint64_t seed) : seed_(seed), engine_(std::make_shared<Mt19937>()) {
  engine_->seed(seed);
}

void Generator::manual_seed(std::uint64_t seed) {
  // Like torch.manual_seed: a new stream, and the cached normal of the old one is dropped.
  seed_ = seed;
  engine_->seed(seed);
  cached_normal_.reset();
  philox_offset_ = 0;
}

std::uint64_t Generator::reserve_philox_counters(std::uint64_t count) {
  const std::uint64_t first = philox_offset_;
  philox_offset_ += count;
  return first;
}

std::uint32_t Generator::random() { return engine_->next(); }

std::uint64_t Generator::random64() {
  const std::uint64_t high = random();  // the first draw is the high half
  return (high << 32) | random();
}

std::optional<double> Generator::take_cached_normal() {
  std::optional<double> value = cached_normal_;
  cached_normal_.reset();
  return value;
}

void Generator::cache_normal(double value) { cached_normal_ = value; }

// State layout (all little-endian as laid out in memory on x86/ARM):
//   8 bytes seed | 4 bytes index | 624 x 4 bytes state | 1 byte has-cached | 8 bytes cached
//   | 8 bytes Philox offset
// set_state also accepts the older layout without the Philox offset (offset 0), so
// checkpoints written before device-side random fills still resume.
namespace {
constexpr std::size_t kStateBytesWithoutPhilox = 8 + 4 + 624 * 4 + 1 + 8;
constexpr std::size_t kStateBytes = kStateBytesWithoutPhilox + 8;

template <class T>
void append_bytes(std::vector<std::uint8_t>& out, const T& value) {
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(&value);
  out.insert(out.end(), bytes, bytes + sizeof(T));
}

template <class T>
T read_bytes(const std::vector<std::uint8_t>& in, std::size_t& offset) {
  T value;
  std::memcpy(&value, in.data() + offset, sizeof(T));
  offset += sizeof(T);
  return value;
}
}  // namespace

std::vector<std::uint8_t> Generator::get_state() const {
  std::vector<std::uint8_t> out;
  out.reserve(kStateBytes);
  append_bytes(out, seed_);
  append_bytes(out, static_cast<std::int32_t>(engine_->index));
  for (std::uint32_t word : engine_->state) append_bytes(out, word);
  append_bytes(out, static_cast<std::uint8_t>(cached_normal_.has_value() ? 1 : 0));
  append_bytes(out, cached_normal_.value_or(0.0));
  append_bytes(out, philox_offset_);
  return out;
}

void Generator::set_state(const std::vector<std::uint8_t>& state) {
  EMBER_CHECK(state.size() == kStateBytes || state.size() == kStateBytesWithoutPhilox, ValueError,
              "Expected a generator state of ", kStateBytes, " bytes, but got ", state.size());
  std::size_t offset = 0;
  auto seed = read_bytes<std::uint64_t>(state, offset);
  auto index = read_bytes<std::int32_t>(state, offset);
  EMBER_CHECK(index >= 0 && index <= Mt19937::kStateSize, ValueError, "Invalid mt19937 state index ", index);
  seed_ = seed;
  engine_->index = index;
  for (std::uint32_t& word : engine_->state) word = read_bytes<std::uint32_t>(state, offset);
  bool has_cached = read_bytes<std::uint8_t>(state, offset) != 0;
  double cached = read_bytes<double>(state, offset);
  cached_normal_ = has_cached ? std::optional<double>(cached) : std::nullopt;
  philox_offset_ = state.size() == kStateBytes ? read_bytes<std::uint64_t>(state, offset) : 0;
}

Generator& default_generator() {
  static Generator generator;
  return generator;
}

void manual_seed(std::uint64_t seed) {
  Generator& generator = default_generator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.manual_seed(seed);
}
}  // namespace ember
