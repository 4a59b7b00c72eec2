// core/small_object_pool.h — performance code (a reader can skip it): recycles the small
// heap blocks that every op allocates and frees again within a step.
//
// Each op makes a TensorImpl for its result, often a StorageImpl, and with autograd an
// AutogradMeta and a graph Node, each in one std::make_shared block. A training step of the
// toy MLP (2-30-20-2, batch 32) makes about a hundred of them and frees them all when the
// graph dies; glibc's per-thread cache holds only 7 blocks of a size, so most of those frees
// took its slow path (~150 instructions for a malloc/free pair, docs/performance.md "Fixed
// costs per step"). `make_pooled<T>(...)` is std::make_shared with an allocator that keeps
// freed blocks on a per-thread free list per 16-byte size class (up to 512 bytes), so a
// block costs a list pop and a list push.
//
// Blocks may be freed on another thread than the one that allocated them (a DataLoader
// worker's batch dies on the main thread): they join the freeing thread's lists, which is
// fine, since every block came from ::operator new. Each list is bounded, and a thread's lists
// are given back to the system when the thread ends. Under AddressSanitizer nothing is pooled,
// so that a use after free is still caught.
#pragma once

#include <cstddef>
#include <memory>
#include <utility>

namespace ember::detail {

void* pool_allocate(std::size_t nbytes);
void pool_deallocate(void* block, std::size_t nbytes) noexcept;
// False under AddressSanitizer, where every block goes straight to operator new and delete.
bool pool_enabled() noexcept;

template <class T>
struct PoolAllocator {
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "pooled blocks have operator new's alignment");
  using value_type = T;
  PoolAllocator() = default;
  template <class U>
  PoolAllocator(const PoolAllocator<U>&) noexcept {}  // NOLINT: rebinding, as allocate_shared does
  T* allocate(std::size_t n) { return static_cast<T*>(pool_allocate(n * sizeof(T))); }
  void deallocate(T* block, std::size_t n) noexcept { pool_deallocate(block, n * sizeof(T)); }
  template <class U>
  bool operator==(const PoolAllocator<U>&) const noexcept { return true; }
};

// std::make_shared<T>(args...), with the object and its control block from the pool.
template <class T, class... Args>
std::shared_ptr<T> make_pooled(Args&&... args) {
  return std::allocate_shared<T>(PoolAllocator<T>(), std::forward<Args>(args)...);
}

}  // namespace ember::detail
