// cuda/emulate/shared_memory.h — checked __shared__ arrays for the emulator.
//
// On a GPU a kernel's __shared__ array is a plain pointer. Here EMBER_SHARED_ARRAY gives a
// SharedPtr<T> instead: it indexes and moves like a T*, but every element access goes
// through a SharedRef<T>, which tells the emulator "this thread reads (or writes) these
// bytes" before touching them. That one hook is what lets the emulator report reads of
// unwritten shared memory (initcheck), conflicting accesses between two barriers
// (racecheck) and accesses outside the array (memcheck), naming the thread that did it.
// Kernel code that passes a shared array to a helper spells the parameter
// SharedPointer<T> (device_support.cuh): T* under nvcc, SharedPtr<T> here.
// Included by emulator.h; not used by the GPU build.
#pragma once

#include <cstddef>
#include <cstring>

namespace ember::emulate {

template <class T>
class SharedRef {
 public:
  explicit SharedRef(T* address) : address_(address) {}

  T load() const {
    shared_access(address_, sizeof(T), /*write=*/false);
    T value;
    std::memcpy(static_cast<void*>(&value), address_, sizeof(T));
    return value;
  }
  void store(const T& value) const {
    shared_access(address_, sizeof(T), /*write=*/true);
    std::memcpy(static_cast<void*>(address_), &value, sizeof(T));
  }

  // Reading: a SharedRef converts to its value wherever a T is expected.
  operator T() const { return load(); }  // NOLINT(google-explicit-constructor): reads like a T&
  // Writing: element = value, element = other element, and the compound assignments
  // (each is a read followed by a write, as on a GPU).
  const SharedRef& operator=(const T& value) const { store(value); return *this; }
  const SharedRef& operator=(const SharedRef& other) const { store(other.load()); return *this; }
  template <class U> const SharedRef& operator+=(const U& v) const { store(static_cast<T>(load() + v)); return *this; }
  template <class U> const SharedRef& operator-=(const U& v) const { store(static_cast<T>(load() - v)); return *this; }
  template <class U> const SharedRef& operator*=(const U& v) const { store(static_cast<T>(load() * v)); return *this; }
  template <class U> const SharedRef& operator/=(const U& v) const { store(static_cast<T>(load() / v)); return *this; }

 private:
  T* address_;
};

template <class T>
class SharedPtr {
 public:
  // The array is [begin, begin + count); this pointer is at element `index` of it (kept as
  // an index, so moving past the end is not undefined behaviour on the host).
  SharedPtr(T* begin, std::ptrdiff_t index, std::ptrdiff_t count) : begin_(begin), index_(index), count_(count) {}

  SharedRef<T> operator[](std::ptrdiff_t i) const { return SharedRef<T>(checked(index_ + i)); }
  SharedRef<T> operator*() const { return SharedRef<T>(checked(index_)); }
  SharedPtr operator+(std::ptrdiff_t n) const { return SharedPtr(begin_, index_ + n, count_); }
  SharedPtr operator-(std::ptrdiff_t n) const { return SharedPtr(begin_, index_ - n, count_); }
  SharedPtr& operator+=(std::ptrdiff_t n) { index_ += n; return *this; }
  SharedPtr& operator-=(std::ptrdiff_t n) { index_ -= n; return *this; }
  std::ptrdiff_t operator-(const SharedPtr& other) const { return index_ - other.index_; }

  // The address of elements [i, i + n) from here, checked to lie inside the array: for
  // vector accesses (shared_load_vector / shared_store_vector in device_support.cuh), which
  // then report the access to the emulator themselves.
  T* checked_range(std::ptrdiff_t i, std::ptrdiff_t n) const {
    checked(index_ + i + n - 1);
    return checked(index_ + i);
  }

 private:
  T* checked(std::ptrdiff_t index) const {
    if (index < 0 || index >= count_) shared_out_of_bounds(index, count_, sizeof(T));
    return begin_ + index;
  }

  T* begin_;
  std::ptrdiff_t index_;
  std::ptrdiff_t count_;
};

// The emulator's EMBER_SHARED_ARRAY(type, name, count) and, with an alignment, its
// EMBER_SHARED_ARRAY_ALIGNED.
template <class T>
SharedPtr<T> shared_array(std::ptrdiff_t count, std::size_t alignment = alignof(T)) {
  T* base = static_cast<T*>(shared_bytes(sizeof(T) * static_cast<std::size_t>(count), alignment));
  return SharedPtr<T>(base, 0, count);
}

}  // namespace ember::emulate
