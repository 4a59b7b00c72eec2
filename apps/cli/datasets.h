// apps/cli/datasets.h — the data sets `ember` trains and evaluates on, as in-memory tensors.
//
//   fashion-mnist  Debian's dataset-fashion-mnist: /usr/share/datasets/fashion-mnist
//                  (60000 training and 10000 test images of 28x28, 10 named classes)
//   toy            the tutorial's §6 data: 5 training and 2 test examples with 2 features
//   idx:DIR        MNIST-style IDX files in DIR: {train,t10k}-{images-idx3,labels-idx1}-ubyte,
//                  each gzipped (.gz) or not
//   csv:FILE       one example per row: a class index column (--label-column, default 0)
//                  and feature values. A first line with a cell that is not a number
//                  is a header (--header / --no-header force it). There is no separate
//                  test split: evaluate on another file with `ember eval --data`.
// Preprocessing (part of the model, recorded in its checkpoint): features are multiplied by
// the input scale, --input-scale or by default 1/255 for IDX images (pixels 0..255 -> [0, 1],
// exactly as the reference program's x / 255) and 1 for CSV (its columns are features, not
// necessarily pixels) and the toy data. Every problem with a file (missing, wrong magic,
// truncated, counts that disagree, labels out of range) is one IOError naming the file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <ember/core/tensor.h>

#include "options.h"

namespace ember::cli {

// The folder of an IDX data set's files ("fashion-mnist" or "idx:DIR"), "" for other specs.
std::string idx_directory_of(const std::string& spec);

struct DataSplit {
  Tensor features;  // [N, F] float32
  Tensor labels;    // [N] int64 in [0, num_classes)
  std::int64_t size() const { return labels.defined() ? labels.size(0) : 0; }
};

struct LoadedData {
  std::string spec;
  DataSplit train;
  std::optional<DataSplit> test;
  std::int64_t num_features = 0;
  std::int64_t num_classes = 0;
  std::vector<std::string> class_names;  // "T-shirt/top", ... for Fashion-MNIST, else "0", "1", ...
  bool csv_has_header = false;           // csv:FILE: whether its first line was read as a header
  double input_scale = 1.0;              // what the features were multiplied by
  // IDX images of rows x cols: {1, rows, cols}, the shape a CNN views each example as
  // (features are stored flattened, [N, rows * cols]); empty for CSV and toy data.
  std::vector<std::int64_t> image_shape;
};

// 1/255 for fashion-mnist and idx:DIR, 1 for csv:FILE and toy.
double default_input_scale(const std::string& spec);
// features * scale; a scale 1/D with D a whole number divides by D instead (x / 255 as in
// PyTorch, bit for bit). scale 1 returns the tensor itself.
Tensor apply_input_scale(const Tensor& features, double scale);
// "1/255", "1", "0.5": for the run's header.
std::string describe_input_scale(double scale);

// Reads the data set `options.spec` names. num_classes is options.num_classes
// (--num-classes) when given, else the largest training label + 1 (10 for Fashion-MNIST) —
// refused when more than half of those classes have no training example (a stray label or
// the wrong --label-column), with a message suggesting --num-classes. A label outside
// [0, num_classes) is an error naming the example.
LoadedData load_data(const DataOptions& options);

// Holds out floor(fraction * N) examples for validation: the first indices of
// randperm(N) from a Generator seeded with `seed`, the rest (in that permuted order) stay
// for training. The default generator is not touched, so model init and shuffling are the
// same with or without a split.
struct TrainValidation {
  DataSplit train;
  std::optional<DataSplit> validation;
};
TrainValidation split_validation(const DataSplit& data, double fraction, std::uint64_t seed);

// Examples to predict: IDX images (any number of dims after the first, flattened) or CSV
// rows of pixels — features only (num_features columns, or any count with no_label), or
// in the training layout with a label column (num_features + 1 columns; the label is shown
// next to the prediction). Features are multiplied by input_scale (the checkpoint's).
struct PredictionInputs {
  Tensor features;  // [N, F] float32
  Tensor labels;    // [N] int64 for CSV input with a label column; undefined otherwise
};
PredictionInputs load_prediction_inputs(const std::string& path, std::int64_t num_features, const DataOptions& csv,
                                        bool no_label, double input_scale);

// Checks that labels lie in [0, num_classes): "FILE: label 12 of example 3 is out of range
// for 10 classes".
void check_labels(const Tensor& labels, std::int64_t num_classes, const std::string& source);

}  // namespace ember::cli
