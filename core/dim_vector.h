// core/dim_vector.h — DimVector: a tensor's sizes or strides, held inline for up to 5 dims.
//
// Tutorial §2 (a tensor's shape). Every tensor carries two lists of int64 (sizes and
// strides), and every op makes new ones for its output. As std::vectors they were two heap
// allocations per tensor, the largest share of a small training step's allocations
// (docs/performance.md, "the toy step"). A DimVector keeps up to kInlineDims values inside
// itself and moves to the heap only beyond that, as c10::DimVector (SmallVector<int64_t, 5>)
// does in PyTorch.
//
// It behaves as a std::vector<int64_t> wherever ember uses one: the same members (size,
// data, push_back, insert, erase, resize, ...), brace and (count, value) construction, and
// implicit conversions from and to std::vector, so code written against std::vector (and
// users' code) keeps compiling. Only the storage differs.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace ember {

// Whether two lists of n dims hold the same values: the one comparison behind DimVector's
// and IntArrayRef's ==. A plain loop: std::equal on int64 becomes a call to memcmp, slower
// for a few dims.
inline bool same_dims(const std::int64_t* a, const std::int64_t* b, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

class DimVector {
 public:
  using value_type = std::int64_t;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = std::int64_t&;
  using const_reference = const std::int64_t&;
  using pointer = std::int64_t*;
  using const_pointer = const std::int64_t*;
  using iterator = std::int64_t*;
  using const_iterator = const std::int64_t*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;

  // Dims held without a heap allocation: 5 covers batched images (N, C, H, W) and attention's
  // (B, heads, T, T) with one to spare.
  static constexpr size_type kInlineDims = 5;

  DimVector() noexcept = default;
  explicit DimVector(size_type count, std::int64_t value = 0) { assign(count, value); }
  DimVector(std::initializer_list<std::int64_t> values) { assign(values.begin(), values.end()); }
  template <class Iterator, class = std::enable_if_t<!std::is_integral_v<Iterator>>>
  DimVector(Iterator first, Iterator last) {
    assign(first, last);
  }
  DimVector(const std::vector<std::int64_t>& values) { assign(values.begin(), values.end()); }  // NOLINT
  DimVector(const DimVector& other) { copy_from(other); }
  DimVector(DimVector&& other) noexcept { take(other); }
  ~DimVector() { release(); }

  DimVector& operator=(const DimVector& other) {
    if (this != &other) copy_from(other);
    return *this;
  }
  DimVector& operator=(DimVector&& other) noexcept {
    if (this != &other) {
      release();
      take(other);
    }
    return *this;
  }
  DimVector& operator=(std::initializer_list<std::int64_t> values) {
    assign(values.begin(), values.end());
    return *this;
  }

  operator std::vector<std::int64_t>() const { return {begin(), end()}; }  // NOLINT
  std::vector<std::int64_t> vec() const { return {begin(), end()}; }

  size_type size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  size_type capacity() const noexcept { return capacity_; }
  static constexpr size_type max_size() noexcept { return PTRDIFF_MAX / sizeof(std::int64_t); }
  std::int64_t* data() noexcept { return data_; }
  const std::int64_t* data() const noexcept { return data_; }

  iterator begin() noexcept { return data_; }
  iterator end() noexcept { return data_ + size_; }
  const_iterator begin() const noexcept { return data_; }
  const_iterator end() const noexcept { return data_ + size_; }
  const_iterator cbegin() const noexcept { return data_; }
  const_iterator cend() const noexcept { return data_ + size_; }
  reverse_iterator rbegin() noexcept { return reverse_iterator(end()); }
  reverse_iterator rend() noexcept { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const noexcept { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const noexcept { return const_reverse_iterator(begin()); }

  std::int64_t& operator[](size_type i) noexcept { return data_[i]; }
  const std::int64_t& operator[](size_type i) const noexcept { return data_[i]; }
  std::int64_t& at(size_type i) {
    if (i >= size_) throw std::out_of_range("DimVector::at: index out of range");
    return data_[i];
  }
  const std::int64_t& at(size_type i) const {
    if (i >= size_) throw std::out_of_range("DimVector::at: index out of range");
    return data_[i];
  }
  std::int64_t& front() noexcept { return data_[0]; }
  const std::int64_t& front() const noexcept { return data_[0]; }
  std::int64_t& back() noexcept { return data_[size_ - 1]; }
  const std::int64_t& back() const noexcept { return data_[size_ - 1]; }

  void reserve(size_type wanted) {
    if (wanted > capacity_) grow(wanted);
  }
  void clear() noexcept { size_ = 0; }
  void push_back(std::int64_t value) {
    if (size_ == capacity_) grow(size_ + 1);
    data_[size_++] = value;
  }
  std::int64_t& emplace_back(std::int64_t value) {
    push_back(value);
    return back();
  }
  void pop_back() noexcept { --size_; }
  void resize(size_type count, std::int64_t value = 0) {
    reserve(count);
    for (size_type i = size_; i < count; ++i) data_[i] = value;
    size_ = count;
  }
  void assign(size_type count, std::int64_t value) {
    size_ = 0;
    resize(count, value);
  }
  template <class Iterator, class = std::enable_if_t<!std::is_integral_v<Iterator>>>
  void assign(Iterator first, Iterator last) {
    const auto count = static_cast<size_type>(std::distance(first, last));
    size_ = 0;
    reserve(count);
    std::copy(first, last, data_);
    size_ = count;
  }
  void assign(std::initializer_list<std::int64_t> values) { assign(values.begin(), values.end()); }

  iterator insert(const_iterator position, std::int64_t value) { return insert(position, size_type{1}, value); }
  iterator insert(const_iterator position, size_type count, std::int64_t value) {
    const auto index = static_cast<size_type>(position - data_);
    open_gap(index, count);
    std::fill(data_ + index, data_ + index + count, value);
    return data_ + index;
  }
  template <class Iterator, class = std::enable_if_t<!std::is_integral_v<Iterator>>>
  iterator insert(const_iterator position, Iterator first, Iterator last) {
    const auto index = static_cast<size_type>(position - data_);
    // The source may be this vector itself: copy it aside before the gap moves it.
    const DimVector values(first, last);
    open_gap(index, values.size());
    std::copy(values.begin(), values.end(), data_ + index);
    return data_ + index;
  }
  iterator insert(const_iterator position, std::initializer_list<std::int64_t> values) {
    return insert(position, values.begin(), values.end());
  }
  iterator erase(const_iterator position) { return erase(position, position + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    const auto index = static_cast<size_type>(first - data_);
    const auto count = static_cast<size_type>(last - first);
    std::copy(data_ + index + count, data_ + size_, data_ + index);
    size_ -= count;
    return data_ + index;
  }
  void swap(DimVector& other) noexcept {
    DimVector held(std::move(other));
    other = std::move(*this);
    *this = std::move(held);
  }

  friend bool operator==(const DimVector& a, const DimVector& b) noexcept {
    return a.size_ == b.size_ && same_dims(a.data_, b.data_, a.size_);
  }
  // Against a std::vector directly: through the conversions, `vector == DimVector` would be
  // ambiguous between C++20's two argument orders.
  friend bool operator==(const DimVector& a, const std::vector<std::int64_t>& b) noexcept {
    return a.size_ == b.size() && same_dims(a.data_, b.data(), a.size_);
  }
  friend bool operator<(const DimVector& a, const DimVector& b) noexcept {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  bool on_heap() const noexcept { return data_ != inline_; }
  // Copies other's values. When they fit inline, all kInlineDims slots are copied at once: a
  // fixed-size copy is a few moves, where a sized one is a call to memmove. Every buffer holds
  // at least kInlineDims values (a heap block has more), so the read stays inside other's.
  void copy_from(const DimVector& other) {
    if (other.size_ <= kInlineDims) {
      std::memcpy(data_, other.data_, sizeof inline_);
      size_ = other.size_;
      return;
    }
    assign(other.begin(), other.end());
  }
  void release() noexcept {
    if (on_heap()) ::operator delete(data_);
    data_ = inline_;
    size_ = 0;
    capacity_ = kInlineDims;
  }
  // Takes other's values, leaving it empty; a heap buffer changes owner without copying.
  void take(DimVector& other) noexcept {
    size_ = other.size_;
    if (other.on_heap()) {
      data_ = other.data_;
      capacity_ = other.capacity_;
      other.data_ = other.inline_;
      other.capacity_ = kInlineDims;
    } else {
      std::memcpy(inline_, other.inline_, sizeof inline_);
    }
    other.size_ = 0;
  }
  // As std::vector, a count past max_size() is a std::length_error, never a wrapped byte count.
  void grow(size_type wanted) {
    if (wanted > max_size()) throw std::length_error("DimVector: more values than max_size()");
    const size_type capacity = std::min(std::max(wanted, 2 * capacity_), max_size());
    auto* fresh = static_cast<std::int64_t*>(::operator new(capacity * sizeof(std::int64_t)));
    std::copy(begin(), end(), fresh);
    if (on_heap()) ::operator delete(data_);
    data_ = fresh;
    capacity_ = capacity;
  }
  // Moves [index, size) right by count, growing first if needed.
  void open_gap(size_type index, size_type count) {
    reserve(size_ + count);
    std::copy_backward(data_ + index, data_ + size_, data_ + size_ + count);
    size_ += count;
  }

  std::int64_t* data_ = inline_;
  size_type size_ = 0;
  size_type capacity_ = kInlineDims;
  std::int64_t inline_[kInlineDims] = {};  // zeroed: the fixed-size copies never read an unset value
};

}  // namespace ember
