// apps/cli/datasets.h — the data sets `ember` trains and evaluates on, as in-memory tensors.
//
//   fashion-mnist  Debian's dataset-fashion-mnist: /usr/share/datasets/fashion-mnist
//                  (60000 training and 10000 test images of 28x28, 10 named classes)
//   toy            the tutorial's §6 data: 5 training and 2 test examples with 2 features
//   idx:DIR        MNIST-style IDX files in DIR: {train,t10k}-{images-idx3,labels-idx1}-ubyte,
//                  each gzipped (.gz) or not
//   csv:FILE       one example per row: a class index column (--label-column, default 0)
//                  and pixel values 0..255. A first line with a cell that is not a number
//                  is a header (--header / --no-header force it). There is no separate
//                  test split: evaluate on another file with `ember eval --data`.
// Pixel data are scaled to [0, 1] as float32 (x / 255), exactly as the reference program
// does; the toy data are used as given. Every problem with a file (missing, wrong magic,
// truncated, counts that disagree, labels out of range) is one IOError naming the file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <ember/core/tensor.h>

#include "options.h"

namespace ember::cli {

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
};

// Reads the data set `options.spec` names. num_classes is the largest training label + 1
// (10 for Fashion-MNIST); a test label outside [0, num_classes) is an error.
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
// next to the prediction).
struct PredictionInputs {
  Tensor features;  // [N, F] float32 in [0, 1]
  Tensor labels;    // [N] int64 for CSV input with a label column; undefined otherwise
};
PredictionInputs load_prediction_inputs(const std::string& path, std::int64_t num_features, const DataOptions& csv,
                                        bool no_label);

// Checks that labels lie in [0, num_classes): "FILE: label 12 of example 3 is out of range
// for 10 classes".
void check_labels(const Tensor& labels, std::int64_t num_classes, const std::string& source);

}  // namespace ember::cli
