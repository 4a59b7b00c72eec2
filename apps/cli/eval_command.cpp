// apps/cli/eval_command.cpp — `ember eval`: how good is a checkpoint, class by class.
//
// Rebuilds the MLP from the checkpoint's config, loads its parameters and runs it over a
// data split: by default the test split of the data it was trained on (the file itself
// for csv:FILE). Prints the accuracy, the accuracy of each class (with Fashion-MNIST's
// class names) and the confusion matrix, rows = true class, columns = predicted class.
// The matrix is labelled with class names where they are short enough to keep it narrow:
// Fashion-MNIST's columns get abbreviations of at most 6 letters (its rows the full names),
// data sets without names (idx:, csv:, toy) their class indices.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <vector>

#include <ember/core/error.h>

#include "checkpoint.h"
#include "datasets.h"
#include "device_choice.h"
#include "evaluation.h"
#include "model.h"
#include "options.h"

namespace ember::cli {

namespace {

// Column headings at most 6 characters wide: a name that fits, Fashion-MNIST's
// abbreviations, otherwise the class index.
std::string column_label(const std::string& name, std::int64_t index) {
  static const std::pair<const char*, const char*> kAbbreviations[] = {
      {"T-shirt/top", "Tshirt"}, {"Trouser", "Trousr"}, {"Pullover", "Pullov"}, {"Sneaker", "Sneakr"},
      {"Ankle boot", "Boot"}};
  if (name.size() <= 6) return name;
  for (const auto& [full, short_name] : kAbbreviations) {
    if (name == full) return short_name;
  }
  return std::to_string(index);
}

}  // namespace

int run_eval(const EvalOptions& options) {
  Device device = choose_device(options.device);
  Checkpoint checkpoint = load_checkpoint(options.checkpoint_path);  // config checked against its tensors
  std::shared_ptr<nn::Sequential> model = build_model(checkpoint.model);
  check_state_fits(checkpoint.model_state, *model);
  model->load_state_dict(checkpoint.model_state);
  model->to(device);

  DataOptions data_options = options.data_given ? options.data : checkpoint.train.data;
  // The model's preprocessing and classes, whatever data it is evaluated on.
  data_options.input_scale = checkpoint.input_scale;
  data_options.num_classes = checkpoint.model.num_classes;
  LoadedData data = load_data(data_options);
  bool has_test = data.test.has_value();
  const DataSplit& split = has_test ? *data.test : data.train;
  std::string source = data.spec + (has_test ? " test split" : "");
  EMBER_CHECK(data.num_features == checkpoint.model.in_features, ValueError, source, " has ", data.num_features,
              " features per example but the checkpoint's model expects ", checkpoint.model.in_features);
  std::int64_t classes = checkpoint.model.num_classes;
  check_labels(split.labels, classes, source);

  Evaluation result = evaluate(*model, split, device, options.batch_size);
  std::vector<std::int64_t> confusion(classes * classes, 0);
  const std::int64_t* truth = split.labels.contiguous().data_ptr<std::int64_t>();
  const std::int64_t* predicted =
      result.total > 0 ? result.predictions.contiguous().data_ptr<std::int64_t>() : nullptr;
  for (std::int64_t i = 0; i < result.total; ++i) ++confusion[truth[i] * classes + predicted[i]];

  const std::vector<std::string>& names = checkpoint.class_names;
  auto name_of = [&](std::int64_t c) { return c < static_cast<std::int64_t>(names.size()) ? names[c] : std::to_string(c); };
  // A mid-epoch checkpoint (--save-every) says how far into its epoch it stands.
  const LoaderPosition& position = checkpoint.position;
  const std::string epoch = position.mid_epoch()
                                ? make_message("epoch ", checkpoint.epoch + 1, " at batch ", position.batches_done, " of ",
                                               position.batches_in_epoch)
                                : make_message("epoch ", checkpoint.epoch);
  std::printf("checkpoint: %s (%s, %s, trained on %s, input scale %s)\n", options.checkpoint_path.c_str(),
              describe_model(checkpoint.model).c_str(), epoch.c_str(), checkpoint.data_spec.c_str(),
              describe_input_scale(checkpoint.input_scale).c_str());
  std::printf("data:       %s (%lld examples) on %s\n", source.c_str(), static_cast<long long>(result.total),
              device.str().c_str());
  std::printf("accuracy:   %.2f%% (%lld/%lld)\n\n", 100.0 * result.accuracy(), static_cast<long long>(result.correct),
              static_cast<long long>(result.total));

  std::printf("per-class accuracy:\n");
  for (std::int64_t c = 0; c < classes; ++c) {
    std::int64_t total = 0;
    for (std::int64_t p = 0; p < classes; ++p) total += confusion[c * classes + p];
    std::int64_t right = confusion[c * classes + c];
    if (total == 0) {
      std::printf("  %3lld %-12s      -   (0 examples)\n", static_cast<long long>(c), name_of(c).c_str());
    } else {
      std::printf("  %3lld %-12s %6.2f%%  (%lld/%lld)\n", static_cast<long long>(c), name_of(c).c_str(),
                  100.0 * static_cast<double>(right) / static_cast<double>(total), static_cast<long long>(right),
                  static_cast<long long>(total));
    }
  }

  // Rows: "  index name" as in the per-class list; columns: short labels (column_label).
  // Classes without names ("0", "1", ...) are not named twice.
  bool named = false;
  int row_width = 0;
  for (std::int64_t c = 0; c < classes; ++c) {
    named = named || name_of(c) != std::to_string(c);
    row_width = std::max<int>(row_width, static_cast<int>(name_of(c).size()));
  }
  auto row_name = [&](std::int64_t c) { return named ? name_of(c) : std::string(); };
  if (!named) row_width = 0;
  std::printf("\nconfusion matrix (rows: true class, columns: predicted class):\n  %3s %-*s", "", row_width, "");
  for (std::int64_t p = 0; p < classes; ++p) std::printf(" %6s", column_label(name_of(p), p).c_str());
  std::printf("\n");
  for (std::int64_t c = 0; c < classes; ++c) {
    std::printf("  %3lld %-*s", static_cast<long long>(c), row_width, row_name(c).c_str());
    for (std::int64_t p = 0; p < classes; ++p) std::printf(" %6lld", static_cast<long long>(confusion[c * classes + p]));
    std::printf("\n");
  }
  return 0;
}

}  // namespace ember::cli
