// apps/cli/datasets.cpp — loading fashion-mnist / toy / idx:DIR / csv:FILE (see datasets.h).
#include "datasets.h"

#include <sys/stat.h>

#include <ember/autograd/ops.h>
#include <ember/core/error.h>
#include <ember/core/factories.h>
#include <ember/core/random.h>
#include <ember/core/tensor.h>
#include <ember/data/csv_reader.h>
#include <ember/data/idx_reader.h>

#include "csv_layout.h"

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

// uint8 pixels [N, ...] -> float32 [N, F] in [0, 1].
Tensor scale_pixels(const Tensor& pixels) {
  std::int64_t count = pixels.size(0);
  return pixels.reshape({count, count == 0 ? 0 : pixels.numel() / count}).to(kFloat32) / 255.0;
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
DataSplit read_idx_split(const std::string& directory, const std::string& prefix) {
  std::string images_path = find_idx_file(directory, prefix + "-images-idx3-ubyte");
  std::string labels_path = find_idx_file(directory, prefix + "-labels-idx1-ubyte");
  data::TensorDataset dataset = data::read_idx_dataset(images_path, labels_path);
  const Tensor& images = dataset.data();  // float32 in [0, 1]
  EMBER_CHECK(images.dim() >= 2, IOError, images_path, ": expected images (at least 2 dimensions), found ",
              images.dim(), " dimension(s)");
  std::int64_t count = images.size(0);
  return {images.reshape({count, count == 0 ? 0 : images.numel() / count}), dataset.targets().to(kInt64)};
}

DataSplit csv_split(const DataOptions& options, const std::string& path, bool has_header) {
  data::CsvTable table = data::read_csv(path, csv_options(options, has_header));
  return {table.features / 255.0, table.labels};
}

LoadedData toy_data() {
  LoadedData data;
  // Tutorial §6, exactly as printed there.
  data.train = {tensor({{-1.2, 3.1}, {-0.9, 2.9}, {-0.5, 2.6}, {2.3, -1.1}, {2.7, -1.5}}), tensor({0, 0, 0, 1, 1})};
  data.test = DataSplit{tensor({{-0.8, 2.8}, {2.6, -1.6}}), tensor({0, 1})};
  return data;
}

std::int64_t max_label(const Tensor& labels) { return labels.numel() == 0 ? -1 : labels.max().item<std::int64_t>(); }

}  // namespace

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
  std::string train_source, test_source;
  if (spec == "toy") {
    data = toy_data();
    train_source = test_source = "toy data";
  } else if (spec == "fashion-mnist" || spec.rfind("idx:", 0) == 0) {
    std::string directory = spec == "fashion-mnist" ? kFashionMnistDir : spec.substr(4);
    if (spec == "fashion-mnist" && !file_exists(directory + "/train-images-idx3-ubyte.gz")) {
      throw IOError(directory + "/train-images-idx3-ubyte.gz: no such file (install Debian's dataset-fashion-mnist: "
                    "apt-get install dataset-fashion-mnist)");
    }
    data.train = read_idx_split(directory, "train");
    data.test = read_idx_split(directory, "t10k");
    train_source = directory + "/train-labels-idx1-ubyte";
    test_source = directory + "/t10k-labels-idx1-ubyte";
    if (spec == "fashion-mnist") data.class_names = kFashionMnistClasses;
  } else if (spec.rfind("csv:", 0) == 0) {
    train_source = spec.substr(4);
    data.csv_has_header = resolve_header(options, train_source);
    data.train = csv_split(options, train_source, data.csv_has_header);
  } else {
    throw ValueError("unknown data set '" + spec + "' (expected fashion-mnist, toy, idx:DIR or csv:FILE)");
  }
  data.spec = spec;
  EMBER_CHECK(data.train.size() > 0, IOError, train_source, ": the training set is empty");
  data.num_features = data.train.features.size(1);
  data.num_classes = std::max<std::int64_t>(max_label(data.train.labels) + 1, data.class_names.size());
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
                                        bool no_label) {
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
      inputs.features = table.features / 255.0;
      inputs.labels = table.labels;
    } else {
      inputs.features = read_csv_features(path, has_header) / 255.0;
    }
  } else {
    Tensor images = data::read_idx(path);
    EMBER_CHECK(images.dim() >= 2, IOError, path, ": expected images (at least 2 dimensions), found ", images.dim(),
                " dimension(s)");
    inputs.features = scale_pixels(images);
  }
  EMBER_CHECK(inputs.features.size(1) == num_features, IOError, path, ": examples have ", inputs.features.size(1),
              " features but the model expects ", num_features);
  return inputs;
}

}  // namespace ember::cli
