// core/shape.cpp — shape arithmetic shared by every op.
#include <ember/core/shape.h>

#include <algorithm>
#include <sstream>

#include <ember/core/error.h>

namespace ember {

bool IntArrayRef::operator==(const IntArrayRef& other) const {
  return std::equal(begin(), end(), other.begin(), other.end());
}

std::int64_t compute_numel(IntArrayRef sizes) {
  std::int64_t numel = 1;
  for (std::int64_t size : sizes) numel *= size;
  return numel;
}

Shape contiguous_strides(IntArrayRef sizes) {
  Shape strides(sizes.size());
  std::int64_t running = 1;
  for (std::size_t i = sizes.size(); i-- > 0;) {
    strides[i] = running;
    running *= std::max<std::int64_t>(sizes[i], 1);
  }
  return strides;
}

bool is_contiguous_layout(IntArrayRef sizes, IntArrayRef strides) {
  if (compute_numel(sizes) == 0) return true;
  std::int64_t expected = 1;
  for (std::size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected *= sizes[i];
  }
  return true;
}

std::int64_t wrap_dim(std::int64_t dim, std::int64_t ndim) {
  std::int64_t effective = std::max<std::int64_t>(ndim, 1);
  std::int64_t low = -effective, high = effective - 1;
  EMBER_CHECK(dim >= low && dim <= high, IndexError, "Dimension out of range (expected to be in range of [", low,
              ", ", high, "], but got ", dim, ")");
  return dim < 0 ? dim + effective : dim;
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
  Shape out = requested.vec();
  std::int64_t known = 1;
  int infer_at = -1;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      EMBER_CHECK(infer_at < 0, ShapeError, "only one dimension can be inferred");
      infer_at = static_cast<int>(i);
    } else {
      EMBER_CHECK(out[i] >= 0, ShapeError, "invalid shape dimension ", out[i]);
      known *= out[i];
    }
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
