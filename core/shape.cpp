// core/shape.cpp — shape arithmetic shared by every op.
#include <ember/core/shape.h>

#include <algorithm>
#include <sstream>

#include <ember/core/error.h>

namespace ember {

// A plain loop: std::equal on int64 becomes a call to memcmp, slower than a few compares.
bool IntArrayRef::operator==(const IntArrayRef& other) const {
  return size() == other.size() && same_dims(data(), other.data(), size());
}

namespace {

// a · b, or false when the product leaves int64 (the compilers' checked multiply: one
// instruction and a flag, cheap enough for Tensor::numel()).
bool multiply(std::int64_t a, std::int64_t b, std::int64_t& product) { return !__builtin_mul_overflow(a, b, &product); }
bool add(std::int64_t a, std::int64_t b, std::int64_t& sum) { return !__builtin_add_overflow(a, b, &sum); }

bool contains_zero(IntArrayRef sizes) { return std::find(sizes.begin(), sizes.end(), 0) != sizes.end(); }

// The product of the sizes, or false when it overflows. A 0 anywhere makes the product 0
// even when the sizes before it already overflowed.
bool checked_numel(IntArrayRef sizes, std::int64_t& numel) {
  numel = 1;
  bool fits = true;
  for (std::int64_t size : sizes) fits = multiply(numel, size, numel) && fits;
  if (fits) return true;
  if (contains_zero(sizes)) {
    numel = 0;
    return true;
  }
  return false;
}

[[noreturn]] void throw_storage_overflow(IntArrayRef sizes, const Shape* strides) {
  std::string message = "Storage size calculation overflowed with sizes=" + shape_to_string(sizes);
  if (strides != nullptr) message += " and strides=" + shape_to_string(*strides);
  throw ShapeError(message);
}

}  // namespace

std::int64_t compute_numel(IntArrayRef sizes) {
  std::int64_t numel = 1;
  EMBER_CHECK(checked_numel(sizes, numel), ShapeError, "numel: integer multiplication overflow");
  return numel;
}

Shape contiguous_strides(IntArrayRef sizes) {
  Shape strides(sizes.size());
  std::int64_t running = 1;
  for (std::size_t i = sizes.size(); i-- > 0;) {
    strides[i] = running;
    // The last step's product is never used as a stride: only fail when one is.
    if (i > 0) EMBER_CHECK(multiply(running, std::max<std::int64_t>(sizes[i], 1), running), ShapeError,
                           "Stride calculation overflowed");
  }
  return strides;
}

void check_no_negative_sizes(IntArrayRef sizes) {
  for (std::int64_t size : sizes) {
    EMBER_CHECK(size >= 0, ShapeError, "Trying to create tensor with negative dimension ", size, ": ",
                shape_to_string(sizes));
  }
}

// One pass (every tensor is born through here): a negative size is reported where it is
// met, an overflow only after every size was seen, so a negative one wins as in PyTorch.
void check_sizes_fit(IntArrayRef sizes) {
  std::int64_t product = 1;
  bool overflowed = false;
  for (std::int64_t size : sizes) {
    if (size < 0) check_no_negative_sizes(sizes);  // throws
    overflowed = overflowed || !multiply(product, std::max<std::int64_t>(size, 1), product);
  }
  EMBER_CHECK(!overflowed, ShapeError, "numel: integer multiplication overflow");
}

std::int64_t compute_storage_nbytes(IntArrayRef sizes, std::size_t itemsize) {
  std::int64_t numel = 1, nbytes = 0;
  if (!checked_numel(sizes, numel) || !multiply(numel, static_cast<std::int64_t>(itemsize), nbytes)) {
    throw_storage_overflow(sizes, nullptr);
  }
  return nbytes;
}

std::int64_t compute_storage_nbytes(IntArrayRef sizes, IntArrayRef strides, std::size_t itemsize,
                                    std::int64_t storage_offset) {
  std::int64_t numel = 1, offset_bytes = 0;
  bool fits = checked_numel(sizes, numel);
  // Even with nothing addressed, the first element's address (offset · itemsize) is computed.
  if (!multiply(storage_offset, static_cast<std::int64_t>(itemsize), offset_bytes)) fits = false;
  if (fits && numel == 0) return 0;  // nothing is addressed, whatever the strides
  // The farthest element sits at offset + sum (size_d - 1) · stride_d; one past it, in bytes.
  std::int64_t last = storage_offset;
  for (std::size_t d = 0; fits && d < sizes.size(); ++d) {
    // PyTorch sums in unsigned arithmetic, where a negative stride over two or more elements
    // is a huge number: it reports an overflow, and so does this.
    std::int64_t step = 0;
    fits = !(strides[d] < 0 && sizes[d] > 1) && multiply(sizes[d] - 1, strides[d], step) && add(last, step, last);
  }
  std::int64_t nbytes = 0;
  if (!fits || !add(last, 1, last) || !multiply(last, static_cast<std::int64_t>(itemsize), nbytes)) {
    const Shape stride_list = strides.vec();
    throw_storage_overflow(sizes, &stride_list);
  }
  return nbytes;
}

bool is_contiguous_layout(IntArrayRef sizes, IntArrayRef strides) {
  if (contains_zero(sizes)) return true;  // no element: any strides will do
  std::int64_t expected = 1;
  for (std::size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] == 1) continue;
    if (strides[i] != expected) return false;
    // A tensor's sizes fit (make_tensor checks them); for sizes that do not, the unsigned
    // product wraps rather than overflowing a signed integer (undefined behaviour).
    expected = static_cast<std::int64_t>(static_cast<std::uint64_t>(expected) * static_cast<std::uint64_t>(sizes[i]));
  }
  return true;
}

void throw_dim_out_of_range(std::int64_t dim, std::int64_t ndim) {
  const std::int64_t effective = std::max<std::int64_t>(ndim, 1);
  throw IndexError(make_message("Dimension out of range (expected to be in range of [", -effective, ", ",
                                effective - 1, "], but got ", dim, ")"));
}

Shape broadcast_shapes(IntArrayRef a, IntArrayRef b) {
  std::size_t ndim = std::max(a.size(), b.size());
  Shape out(ndim);
  for (std::size_t i = 0; i < ndim; ++i) {
    // Align from the right.
    std::int64_t offset_a = static_cast<std::int64_t>(i) - static_cast<std::int64_t>(ndim - a.size());
    std::int64_t offset_b = static_cast<std::int64_t>(i) - static_cast<std::int64_t>(ndim - b.size());
    std::int64_t size_a = offset_a >= 0 ? a[offset_a] : 1;
    std::int64_t size_b = offset_b >= 0 ? b[offset_b] : 1;
    EMBER_CHECK(size_a == size_b || size_a == 1 || size_b == 1, ShapeError, "The size of tensor a (", size_a,
                ") must match the size of tensor b (", size_b, ") at non-singleton dimension ", i);
    out[i] = size_a == 1 ? size_b : size_a;
  }
  return out;
}

Shape infer_size(IntArrayRef requested, std::int64_t numel) {
  Shape out = to_shape(requested);
  std::int64_t known = 1;
  bool known_fits = true;  // the product of the given sizes fits in int64
  int infer_at = -1;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      EMBER_CHECK(infer_at < 0, ShapeError, "only one dimension can be inferred");
      infer_at = static_cast<int>(i);
    } else {
      EMBER_CHECK(out[i] >= 0, ShapeError, "invalid shape dimension ", out[i], " at index ", i, " of shape ",
                  shape_to_string(requested));
      known_fits = multiply(known, out[i], known) && known_fits;
    }
  }
  if (!known_fits) {
    // A product beyond int64 can equal no tensor's size — unless a 0 makes it 0. (Letting it
    // wrap would accept [2^62 + 1, 4] for 4 elements: the product wraps to 4.)
    EMBER_CHECK(contains_zero(requested), ShapeError, "shape '", shape_to_string(requested), "' is invalid for input of size ", numel);
    known = 0;
  }
  if (infer_at >= 0 && known == 0) {
    // 0 elements and a 0 among the given sizes: any value fits the -1 (PyTorch refuses too).
    EMBER_CHECK(numel == 0, ShapeError, "shape '", shape_to_string(requested), "' is invalid for input of size ",
                numel);
    throw ShapeError(make_message("cannot reshape tensor of 0 elements into shape ", shape_to_string(requested),
                                  " because the unspecified dimension size -1 can be any value and is ambiguous"));
  }
  bool ok = infer_at >= 0 ? numel % known == 0 : known == numel;
  EMBER_CHECK(ok, ShapeError, "shape '", shape_to_string(requested), "' is invalid for input of size ", numel);
  if (infer_at >= 0) out[infer_at] = numel / known;
  return out;
}

std::string shape_to_string(IntArrayRef sizes) {
  std::ostringstream out;
  out << '[';
  for (std::size_t i = 0; i < sizes.size(); ++i) out << (i ? ", " : "") << sizes[i];
  out << ']';
  return out.str();
}

}  // namespace ember
