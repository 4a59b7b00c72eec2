// core/parallel.h — splitting a loop across the CPU's cores.
//
// parallel_for(begin, end, grain_size, body) calls body(chunk_begin, chunk_end) on
// disjoint chunks covering [begin, end), in parallel when the range is larger than
// grain_size, inline otherwise (so small tensors pay no thread overhead). A persistent
// pool of std::threads serves every call (core/parallel.cpp). Nested calls run inline.
#pragma once

#include <cstdint>
#include <functional>
#include <thread>

namespace ember {

// Below this many elements an elementwise op runs on one thread.
constexpr std::int64_t kDefaultGrainSize = 32768;

void parallel_for(std::int64_t begin, std::int64_t end, std::int64_t grain_size,
                  const std::function<void(std::int64_t, std::int64_t)>& body);
// The same, for a lambda: a range of at most one grain (every op on a small tensor) calls
// the body directly, without building a std::function, which would take a heap block for
// a lambda capturing more than two references (performance code: docs/performance.md).
template <class Body>
void parallel_for(std::int64_t begin, std::int64_t end, std::int64_t grain_size, const Body& body) {
  if (end - begin <= (grain_size > 1 ? grain_size : 1)) {
    if (begin < end) body(begin, end);
    return;
  }
  parallel_for(begin, end, grain_size, std::function<void(std::int64_t, std::int64_t)>(std::cref(body)));
}
int get_num_threads();
void set_num_threads(int threads);  // 1 = no threads at all

// One step of a busy-wait: the x86 `pause` hint (it lets the sibling hyperthread run and
// saves power while polling), a yield elsewhere. Used by the pool's short polls
// (core/parallel.cpp) and the GEMM driver's (core/cpu/gemm_driver.h).
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

}  // namespace ember
