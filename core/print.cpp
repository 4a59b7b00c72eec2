// core/print.cpp — printing a tensor exactly as PyTorch's repr does (torch/_tensor_str.py).
//
// Tutorial §2.3 onwards prints tensors everywhere (tensor([[1, 2], [3, 4]]), grad_fn=<...>,
// the `sci_mode=False` output of §5); ember's programs print the same text, character for
// character. The pieces, in the order PyTorch runs them:
//   1. Summarise: above `threshold` elements only the first and last `edgeitems` of every
//      dim are shown, with "..." between them.
//   2. Formatter: one pass over the shown values decides the mode for the whole tensor —
//      integer-looking floats ("1."), fixed ("0.3113") or scientific ("1.0000e-05") — and
//      the common width every element is right-aligned to.
//   3. Layout: rows are wrapped to `linewidth`, nested dims are joined by ",\n" plus
//      blank lines between higher dims, each level indented one more space.
//   4. Suffixes: device='cuda:0', dtype=torch.float64, grad_fn=<...> / requires_grad=True,
//      each moved to a new line when it would overflow the line.
#include <ember/core/print.h>

#include <cmath>
#include <cstdio>
#include <sstream>
#include <type_traits>
#include <vector>

#include <ember/core/autograd_meta.h>
#include <ember/core/native.h>

namespace ember {

namespace {
PrintOptions print_options;
}  // namespace

void set_printoptions(const PrintOptions& options) { print_options = options; }
const PrintOptions& get_printoptions() { return print_options; }

std::string size_string(IntArrayRef sizes) { return "torch.Size(" + shape_to_string(sizes) + ")"; }

namespace {

// One element, read as the category its dtype belongs to.
struct Element {
  double floating = 0.0;
  std::int64_t integral = 0;
};

// A CPU tensor plus a way to read any element (any strides) as an Element.
class HostView {
 public:
  explicit HostView(const Tensor& tensor) : tensor_(tensor.is_cpu() ? tensor : native::to_device(tensor, kCPU)) {}
  const Tensor& tensor() const { return tensor_; }

  Element at(std::int64_t offset) const {
    Element element;
    EMBER_DISPATCH_ALL_AND_REDUCED(tensor_.dtype(), {
      scalar_t value = static_cast<const scalar_t*>(tensor_.data_ptr())[offset];
      element.floating = static_cast<double>(value);
      // Only integer and bool tensors print `integral`; converting a NaN or an infinity to an
      // integer is undefined behaviour (clang's UBSan reports it), so floats leave it 0.
      if constexpr (std::is_integral_v<scalar_t>) element.integral = static_cast<std::int64_t>(value);
    });
    return element;
  }

 private:
  Tensor tensor_;
};

// The indices of a dim of `size` that are shown: all, or the first and last `edgeitems`.
std::vector<std::int64_t> shown_indices(std::int64_t size, bool summarize, int edgeitems) {
  std::vector<std::int64_t> indices;
  if (summarize && size > 2 * edgeitems) {
    for (std::int64_t i = 0; i < edgeitems; ++i) indices.push_back(i);
    for (std::int64_t i = size - edgeitems; i < size; ++i) indices.push_back(i);
  } else {
    for (std::int64_t i = 0; i < size; ++i) indices.push_back(i);
  }
  return indices;
}

// Every shown element in row-major order (PyTorch's get_summarized_data, flattened).
void collect_shown(const HostView& view, std::int64_t dim, std::int64_t offset, bool summarize,
                   std::vector<Element>& out) {
  const Tensor& t = view.tensor();
  if (dim == t.dim()) {
    out.push_back(view.at(offset));
    return;
  }
  for (std::int64_t i : shown_indices(t.size(dim), summarize, print_options.edgeitems)) {
    collect_shown(view, dim + 1, offset + i * t.stride(dim), summarize, out);
  }
}

// Python's float formatting for the three styles (printf agrees with it on finite values;
// Python spells the non-finite ones "nan", "inf", "-inf" whatever the style).
std::string format_double(double value, char style, int precision) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  char pattern[8] = {'%', '.', '*', style, '\0'};
  std::snprintf(buffer, sizeof buffer, pattern, precision, value);
  return buffer;
}

std::string pad_left(const std::string& text, int width) {
  const int missing = width - static_cast<int>(text.size());
  if (missing <= 0) return text;
  std::string out(static_cast<std::size_t>(missing), ' ');
  out.append(text);
  return out;
}

// PyTorch's _Formatter: decides the style and common width from the shown values.
class Formatter {
 public:
  Formatter(DType dtype, const std::vector<Element>& values) : dtype_(dtype), floating_(is_floating_point(dtype)) {
    const int precision = print_options.precision;
    if (!floating_) {
      for (const Element& value : values) max_width_ = std::max(max_width_, static_cast<int>(integral_text(value).size()));
    } else {
      std::vector<double> finite_nonzero;
      for (const Element& value : values) {
        if (std::isfinite(value.floating) && value.floating != 0.0) finite_nonzero.push_back(value.floating);
      }
      if (!finite_nonzero.empty()) {
        double min_abs = std::fabs(finite_nonzero.front()), max_abs = min_abs;
        for (double value : finite_nonzero) {
          min_abs = std::min(min_abs, std::fabs(value));
          max_abs = std::max(max_abs, std::fabs(value));
          if (value != std::ceil(value)) int_mode_ = false;
        }
        // Scientific when the magnitudes span more than 10^3, or are huge, or tiny — unless
        // set_printoptions forced a choice. The width is measured in the style chosen
        // (PyTorch 2.x; 1.13 measured the automatic style's width, so a forced
        // `sci_mode=False` printed wide columns: "    0.9991").
        const bool wide_range = max_abs / min_abs > 1000.0 || max_abs > 1.0e8 || min_abs < 1.0e-4;
        sci_mode_ = print_options.sci_mode.value_or(wide_range);
        for (double value : finite_nonzero) {
          std::string text = sci_mode_  ? format_double(value, 'e', precision)
                             : int_mode_ ? format_double(value, 'f', 0) + "."  // the "." marks a float
                                         : format_double(value, 'f', precision);
          max_width_ = std::max(max_width_, static_cast<int>(text.size()));
        }
      }
    }
  }

  int width() const { return max_width_; }

  std::string format(const Element& value) const {
    std::string text;
    if (floating_) {
      if (sci_mode_) {
        text = format_double(value.floating, 'e', print_options.precision);
      } else if (int_mode_) {
        text = format_double(value.floating, 'f', 0);
        if (std::isfinite(value.floating)) text += ".";
      } else {
        text = format_double(value.floating, 'f', print_options.precision);
      }
    } else {
      text = integral_text(value);
    }
    return pad_left(text, max_width_);
  }

 private:
  std::string integral_text(const Element& value) const {
    if (dtype_ == DType::Bool) return value.integral != 0 ? "True" : "False";
    return std::to_string(value.integral);
  }

  DType dtype_;
  bool floating_;
  bool int_mode_ = true;
  bool sci_mode_ = false;
  int max_width_ = 1;
};

// "[" + inner + "]", and ",\n" followed by `indent` spaces (appends, not operator+ chains:
// GCC 12 reports false -Wrestrict warnings on those).
std::string bracketed(const std::string& inner) {
  std::string out;
  out.reserve(inner.size() + 2);
  out.push_back('[');
  out.append(inner);
  out.push_back(']');
  return out;
}
std::string line_break(int indent) {
  std::string out = ",\n";
  out.append(static_cast<std::size_t>(std::max(indent, 0)), ' ');
  return out;
}

std::string join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += separator;
    out += parts[i];
  }
  return out;
}

// One row: elements wrapped so that a line holds floor((linewidth - indent) / (width + 2)).
std::string vector_string(const HostView& view, std::int64_t offset, int indent, bool summarize,
                          const Formatter& formatter) {
  const Tensor& t = view.tensor();
  const std::int64_t size = t.size(-1), stride = t.stride(-1);
  const int edgeitems = print_options.edgeitems;
  const int element_length = formatter.width() + 2;
  const auto per_line = std::max<std::int64_t>(
      1, static_cast<std::int64_t>(std::floor(static_cast<double>(print_options.linewidth - indent) / element_length)));
  std::vector<std::string> data;
  if (summarize && size > 2 * edgeitems) {
    for (std::int64_t i = 0; i < edgeitems; ++i) data.push_back(formatter.format(view.at(offset + i * stride)));
    data.push_back(" ...");
    for (std::int64_t i = size - edgeitems; i < size; ++i) data.push_back(formatter.format(view.at(offset + i * stride)));
  } else {
    for (std::int64_t i = 0; i < size; ++i) data.push_back(formatter.format(view.at(offset + i * stride)));
  }
  std::vector<std::string> lines;
  for (std::size_t start = 0; start < data.size(); start += static_cast<std::size_t>(per_line)) {
    std::vector<std::string> line(data.begin() + static_cast<std::ptrdiff_t>(start),
                                  data.begin() + static_cast<std::ptrdiff_t>(std::min(data.size(), start + per_line)));
    lines.push_back(join(line, ", "));
  }
  return bracketed(join(lines, line_break(indent + 1)));
}

// The nested brackets of dims `dim` and beyond, starting at storage offset `offset`.
std::string nested_string(const HostView& view, std::int64_t dim, std::int64_t offset, int indent, bool summarize,
                          const Formatter& formatter) {
  const Tensor& t = view.tensor();
  const std::int64_t remaining = t.dim() - dim;
  if (remaining == 1) return vector_string(view, offset, indent, summarize, formatter);
  const std::int64_t size = t.size(dim);
  const int edgeitems = print_options.edgeitems;
  std::vector<std::string> slices;
  auto slice_at = [&](std::int64_t i) {
    return nested_string(view, dim + 1, offset + i * t.stride(dim), indent + 1, summarize, formatter);
  };
  if (summarize && size > 2 * edgeitems) {
    for (std::int64_t i = 0; i < edgeitems; ++i) slices.push_back(slice_at(i));
    slices.push_back("...");
    for (std::int64_t i = size - edgeitems; i < size; ++i) slices.push_back(slice_at(i));
  } else {
    for (std::int64_t i = 0; i < size; ++i) slices.push_back(slice_at(i));
  }
  // Between slices of a k-dim block: a comma, k - 1 newlines, and the indentation.
  std::string separator = ",";
  separator.append(static_cast<std::size_t>(remaining - 1), '\n');
  separator.append(static_cast<std::size_t>(indent) + 1, ' ');
  return bracketed(join(slices, separator));
}

// The bracketed values (PyTorch's _tensor_str), for a tensor with at least one element.
std::string values_string(const Tensor& tensor, int indent) {
  HostView view(tensor);
  const bool summarize = tensor.numel() > print_options.threshold;
  // Summarised with no edge items, every dim collapses to "..." (to_string adds size=).
  if (summarize && print_options.edgeitems == 0 && tensor.dim() > 0) return "[...]";
  std::vector<Element> shown;
  collect_shown(view, 0, 0, summarize, shown);  // offsets count from data_ptr()
  Formatter formatter(tensor.dtype(), shown);
  if (tensor.dim() == 0) return formatter.format(view.at(0));
  return nested_string(view, 0, 0, indent, summarize, formatter);
}

// "(0, 3)": how Python prints a tuple of sizes.
std::string tuple_string(IntArrayRef sizes) {
  std::string out = "(";
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(sizes[i]);
  }
  if (sizes.size() == 1) out += ",";
  return out + ")";
}

// Appends ", suffix" — or ",\n" + indentation + suffix when the line would pass linewidth.
std::string add_suffixes(const std::string& body, const std::vector<std::string>& suffixes, int indent) {
  std::string out = body;
  const std::size_t last_newline = body.rfind('\n');
  // PyTorch's arithmetic, kept as is: len - rfind("\n") + 1, with rfind = -1 when absent.
  std::int64_t last_line_length = static_cast<std::int64_t>(body.size()) -
                                  (last_newline == std::string::npos ? -1 : static_cast<std::int64_t>(last_newline)) + 1;
  for (const std::string& suffix : suffixes) {
    const auto suffix_length = static_cast<std::int64_t>(suffix.size());
    if (last_line_length + suffix_length + 2 > print_options.linewidth) {
      out.append(line_break(indent)).append(suffix);
      last_line_length = indent + suffix_length;
    } else {
      out.append(", ").append(suffix);
      last_line_length += suffix_length + 2;
    }
  }
  return out + ")";
}

}  // namespace

std::string to_string(const Tensor& tensor) {
  if (!tensor.defined()) return "[ Tensor (undefined) ]";
  const std::string prefix = "tensor(";
  const int indent = static_cast<int>(prefix.size());
  std::vector<std::string> suffixes;

  if (!tensor.is_cpu()) {
    Device device = tensor.device();
    suffixes.push_back("device='" + (device.has_index() ? device.str() : device.str() + ":0") + "'");
  }
  // float32 (the default dtype), int64 and bool are implied by how the values look.
  const DType dtype = tensor.dtype();
  const bool has_default_dtype = dtype == default_float_dtype() || dtype == DType::Int64 || dtype == DType::Bool;
  std::string body;
  if (tensor.numel() == 0) {
    // No values to show the dtype, so anything but float32 is spelled out; the shape too,
    // unless it is the plain (0,).
    if (tensor.dim() != 1) suffixes.push_back("size=" + tuple_string(tensor.sizes()));
    if (dtype != default_float_dtype()) suffixes.push_back("dtype=torch." + dtype_name(dtype));
    body = "[]";
  } else {
    // edgeitems = 0 may hide every value, so the shape is always shown then.
    if (print_options.edgeitems == 0) suffixes.push_back("size=" + tuple_string(tensor.sizes()));
    if (!has_default_dtype) suffixes.push_back("dtype=torch." + dtype_name(dtype));
    body = values_string(tensor, indent);
  }
  // PyTorch shows grad_fn when there is one, requires_grad=True otherwise.
  if (std::shared_ptr<GradFn> grad_fn = tensor.grad_fn()) {
    suffixes.push_back("grad_fn=<" + grad_fn->name() + ">");
  } else if (tensor.requires_grad()) {
    suffixes.push_back("requires_grad=True");
  }
  return add_suffixes(prefix + body, suffixes, indent);
}

std::ostream& operator<<(std::ostream& out, const Tensor& tensor) { return out << to_string(tensor); }

}  // namespace ember
