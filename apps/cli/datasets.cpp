// apps/cli/datasets.cpp — loading fashion-mnist / toy / idx:DIR / csv:FILE (see datasets.h).
#include "datasets.h"

#include <sys/stat.h>

#include <cmath>
#include <cstdio>

#include <ember/autograd/ops.h>
#include <ember/core/error.h>
#include <ember/core/factories.h>
#include <ember/core/random.h>
#include <ember/core/tensor.h>
#include <ember/data/csv_reader.h>
#include <ember/data/idx_reader.h>

#include "csv_layout.h"
#include "model.h"

namespace ember::cli {

namespace {

constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

// Fashion-MNIST's label names, in label order (Zalando's README).
const std::vector<std::string> kFashionMnistClasses = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                                       "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};

bool file_exists(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

// DIR/NAME.gz when it exists, else DIR/NAME; IOError when neither does.
std::string find_idx_file(const std::string& directory, const std::string& name) {
  std::string plain = directory + "/" + name;
  if (file_exists(plain + ".gz")) return plain + ".gz";
  if (file_exists(plain)) return plain;
  throw IOError(plain + "[.gz]: no such file (expected MNIST-style IDX files in " + directory + ")");
}

// IDX values [N, ...] -> float32 [N, F], times `scale`.
Tensor flatten_scaled(const Tensor& values, double scale) {
  std::int64_t count = values.size(0);
  return apply_input_scale(values.reshape({count, count == 0 ? 0 : values.numel() / count}).to(kFloat32), scale);
}

// --header / --no-header, or (neither) what the file's first line says (csv_layout.h).
bool resolve_header(const DataOptions& options, const std::string& path) {
  if (options.csv_header == CsvHeader::Yes) return true;
  if (options.csv_header == CsvHeader::No) return false;
  return inspect_csv(path).first_line_is_header;
}

data::CsvOptions csv_options(const DataOptions& options, bool has_header) {
  data::CsvOptions csv;
  csv.label_column = options.csv_label_column;
  csv.has_header = has_header;
  return csv;
}

// One split of an IDX data set: PREFIX-images-idx3-ubyte and PREFIX-labels-idx1-ubyte.
// data/idx_reader checks the files themselves (magic, truncation, counts).
// `image_shape` receives {1, rows, cols} for images of 2-D examples (what a CNN reads).
DataSplit read_idx_split(const std::string& directory, const std::string& prefix, double scale,
                         std::vector<std::int64_t>* image_shape = nullptr) {
  std::string images_path = find_idx_file(directory, prefix + "-images-idx3-ubyte");
  std::string labels_path = find_idx_file(directory, prefix + "-labels-idx1-ubyte");
  data::TensorDataset dataset = data::read_idx_dataset(images_path, labels_path, /*scale_to_unit=*/false);
  const Tensor& images = dataset.data();  // float32 0..255
  EMBER_CHECK(images.dim() >= 2, IOError, images_path, ": expected images (at least 2 dimensions), found ",
              images.dim(), " dimension(s)");
  if (image_shape != nullptr && images.dim() == 3) *image_shape = {1, images.size(1), images.size(2)};
  return {flatten_scaled(images, scale), dataset.targets().to(kInt64)};
}

DataSplit csv_split(const DataOptions& options, const std::string& path, bool has_header, double scale) {
  data::CsvTable table = data::read_csv(path, csv_options(options, has_header));
  return {apply_input_scale(table.features, scale), table.labels};
}

LoadedData toy_data() {
  LoadedData data;
  // Tutorial §6, exactly as printed there.
  data.train = {tensor({{-1.2, 3.1}, {-0.9, 2.9}, {-0.5, 2.6}, {2.3, -1.1}, {2.7, -1.5}}), tensor({0, 0, 0, 1, 1})};
  data.test = DataSplit{tensor({{-0.8, 2.8}, {2.6, -1.6}}), tensor({0, 1})};
  return data;
}

std::int64_t max_label(const Tensor& labels) { return labels.numel() == 0 ? -1 : labels.max().item<std::int64_t>(); }

// Without --num-classes the class count is the largest label + 1; a stray label (255 in a
// 3-class set, a pixel column taken for the labels) would silently build a huge classifier.
// So when more than half of 0..max has no example, refuse and ask for --num-classes.
void check_labels_dense(const Tensor& labels, std::int64_t num_classes, const std::string& source) {
  // N examples use at most N classes: many more than 2N classes are sparse without
  // counting (and without a table of num_classes flags).
  EMBER_CHECK(num_classes <= std::max<std::int64_t>(2 * labels.numel(), 1 << 24), IOError, source, ": the labels use at most ", labels.numel(),
              " of the ", num_classes, " classes 0..", num_classes - 1, " (largest label ", num_classes - 1,
              "); is the label column right? If these are the classes, say so with --num-classes ", num_classes);
  std::vector<bool> used(static_cast<std::size_t>(num_classes), false);
  const std::int64_t* values = labels.contiguous().data_ptr<std::int64_t>();
  std::int64_t distinct = 0;
  for (std::int64_t i = 0; i < labels.numel(); ++i) {
    if (values[i] < 0 || values[i] >= num_classes) return;  // check_labels reports it
    if (!used[static_cast<std::size_t>(values[i])]) {
      used[static_cast<std::size_t>(values[i])] = true;
      ++distinct;
    }
  }
  EMBER_CHECK(2 * distinct >= num_classes, IOError, source, ": the labels use only ", distinct, " of the ",
              num_classes, " classes 0..", num_classes - 1, " (largest label ", num_classes - 1,
              "); is the label column right? If these are the classes, say so with --num-classes ", num_classes);
}

}  // namespace

namespace {
// D when scale is exactly 1/D for a whole D in (1, 2^53], else 0.
double whole_divisor(double scale) {
  if (!(scale > 0 && scale < 1)) return 0;
  const double divisor = std::round(1.0 / scale);
  return divisor > 1 && divisor <= 9007199254740992.0 && 1.0 / divisor == scale ? divisor : 0;
}
}  // namespace

double default_input_scale(const std::string& spec) {
  return spec == "fashion-mnist" || spec.rfind("idx:", 0) == 0 ? 1.0 / 255.0 : 1.0;
}

Tensor apply_input_scale(const Tensor& features, double scale) {
  if (scale == 1.0) return features;
  // 1/D for a whole D divides by D: x / 255 exactly as PyTorch's reference (x.float() / 255),
  // not x * 0.00392..., which rounds differently in the last bit.
  const double divisor = whole_divisor(scale);
  if (divisor > 0) return features / divisor;
  return features * scale;
}

std::string describe_input_scale(double scale) {
  const double divisor = whole_divisor(scale);
  if (divisor > 0) {
    char text[48];
    std::snprintf(text, sizeof text, "1/%.0f", divisor);
    return text;
  }
  return make_message(scale);
}

void check_labels(const Tensor& labels, std::int64_t num_classes, const std::string& source) {
  const std::int64_t* values = labels.contiguous().data_ptr<std::int64_t>();
  for (std::int64_t i = 0; i < labels.numel(); ++i) {
    EMBER_CHECK(values[i] >= 0 && values[i] < num_classes, IOError, source, ": label ", values[i], " of example ", i,
                " is out of range for ", num_classes, " classes");
  }
}

LoadedData load_data(const DataOptions& options) {
  const std::string& spec = options.spec;
  LoadedData data;
  double scale = options.input_scale > 0 ? options.input_scale : default_input_scale(spec);
  std::string train_source, test_source;
  if (spec == "toy") {
    data = toy_data();
    data.train.features = apply_input_scale(data.train.features, scale);
    data.test->features = apply_input_scale(data.test->features, scale);
    train_source = test_source = "toy data";
  } else if (spec == "fashion-mnist" || spec.rfind("idx:", 0) == 0) {
    std::string directory = idx_directory_of(spec);
    if (spec == "fashion-mnist" && !file_exists(directory + "/train-images-idx3-ubyte.gz")) {
      throw IOError(directory + "/train-images-idx3-ubyte.gz: no such file (install Debian's dataset-fashion-mnist: "
                    "apt-get install dataset-fashion-mnist)");
    }
    data.train = read_idx_split(directory, "train", scale, &data.image_shape);
    data.test = read_idx_split(directory, "t10k", scale);
    train_source = directory + "/train-labels-idx1-ubyte";
    test_source = directory + "/t10k-labels-idx1-ubyte";
    if (spec == "fashion-mnist") data.class_names = kFashionMnistClasses;
  } else if (spec.rfind("csv:", 0) == 0) {
    train_source = spec.substr(4);
    data.csv_has_header = resolve_header(options, train_source);
    data.train = csv_split(options, train_source, data.csv_has_header, scale);
  } else {
    throw ValueError("unknown data set '" + spec + "' (expected fashion-mnist, toy, idx:DIR or csv:FILE)");
  }
  data.spec = spec;
  data.input_scale = scale;
  EMBER_CHECK(data.train.size() > 0, IOError, train_source, ": the training set is empty");
  data.num_features = data.train.features.size(1);
  if (options.num_classes > 0) {
    data.num_classes = options.num_classes;
    EMBER_CHECK(data.class_names.empty() || static_cast<std::int64_t>(data.class_names.size()) == data.num_classes,
                ValueError, "--num-classes ", data.num_classes, ": ", spec, " has ", data.class_names.size(),
                " classes");
  } else {
    // A class count is a layer width (model.h): a larger label cannot be a class index.
    const std::int64_t largest = max_label(data.train.labels);
    EMBER_CHECK(largest < kMaxLayerWidth, IOError, train_source, ": label ", largest, " is too large for a class index (",
                "at most ", kMaxLayerWidth - 1, ")");
    data.num_classes = std::max<std::int64_t>(largest + 1, data.class_names.size());
    if (data.class_names.empty()) check_labels_dense(data.train.labels, data.num_classes, train_source);
  }
  check_labels(data.train.labels, data.num_classes, train_source);
  if (data.test) {
    EMBER_CHECK(data.test->features.size(1) == data.num_features, IOError, test_source, ": test examples have ",
                data.test->features.size(1), " features but training examples have ", data.num_features);
    check_labels(data.test->labels, data.num_classes, test_source);
  }
  if (data.class_names.empty()) {
    for (std::int64_t c = 0; c < data.num_classes; ++c) data.class_names.push_back(std::to_string(c));
  }
  return data;
}

TrainValidation split_validation(const DataSplit& data, double fraction, std::uint64_t seed) {
  if (fraction <= 0) return {data, std::nullopt};
  std::int64_t count = data.size();
  auto held_out = static_cast<std::int64_t>(fraction * static_cast<double>(count));
  EMBER_CHECK(held_out < count, ValueError, "--val-split ", fraction, " leaves no training examples");
  Generator generator(seed);
  Tensor order = randperm(count, {}, &generator);
  Tensor validation_index = order.slice(0, 0, held_out);
  Tensor train_index = order.slice(0, held_out, count);
  TrainValidation result;
  result.train = {data.features.index_select(0, train_index), data.labels.index_select(0, train_index)};
  result.validation = DataSplit{data.features.index_select(0, validation_index), data.labels.index_select(0, validation_index)};
  return result;
}

PredictionInputs load_prediction_inputs(const std::string& path, std::int64_t num_features, const DataOptions& csv,
                                        bool no_label, double input_scale) {
  bool is_csv = path.size() >= 4 && path.compare(path.size() - 4, 4, ".csv") == 0;
  PredictionInputs inputs;
  if (is_csv) {
    // Pixels 0..255, with or without a label column: num_features columns are features
    // only, one more holds a label (shown next to the prediction), at --label-column.
    CsvLayout layout = inspect_csv(path);
    bool has_header = csv.csv_header == CsvHeader::Auto ? layout.first_line_is_header : csv.csv_header == CsvHeader::Yes;
    bool has_label = !no_label && layout.columns == num_features + 1;
    std::string expected = no_label ? "with --no-label every column is a feature"
                                    : "expected " + std::to_string(num_features) + " columns, or " +
                                          std::to_string(num_features + 1) + " with a label column";
    EMBER_CHECK(layout.columns == num_features || has_label, IOError, path, ": rows have ", layout.columns,
                " columns but the model takes ", num_features, " features (", expected, ")");
    if (has_label) {
      data::CsvTable table = data::read_csv(path, csv_options(csv, has_header));
      inputs.features = apply_input_scale(table.features, input_scale);
      inputs.labels = table.labels;
    } else {
      inputs.features = apply_input_scale(read_csv_features(path, has_header), input_scale);
    }
  } else {
    Tensor images = data::read_idx(path);
    EMBER_CHECK(images.dim() >= 2, IOError, path, ": expected images (at least 2 dimensions), found ", images.dim(),
                " dimension(s)");
    inputs.features = flatten_scaled(images, input_scale);
    // Float IDX files (type 0x0D/0x0E) may hold nan or inf, or overflow float32 when scaled.
    const float* values = inputs.features.contiguous().data_ptr<float>();
    for (std::int64_t i = 0; i < inputs.features.numel(); ++i) {
      EMBER_CHECK(std::isfinite(values[i]), IOError, path, ": value ", i, " of the input is not finite (", values[i],
                  " after the input scale)");
    }
  }
  EMBER_CHECK(inputs.features.size(1) == num_features, IOError, path, ": examples have ", inputs.features.size(1),
              " features but the model expects ", num_features);
  return inputs;
}

std::string idx_directory_of(const std::string& spec) {
  if (spec == "fashion-mnist") return kFashionMnistDir;
  if (spec.rfind("idx:", 0) == 0) return spec.substr(4);
  return "";
}

}  // namespace ember::cli
