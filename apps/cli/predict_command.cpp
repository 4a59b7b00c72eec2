// apps/cli/predict_command.cpp — `ember predict`: the class of each example in a file.
//
// Tutorial §7's last step — softmax over the logits gives class-membership probabilities,
// argmax the predicted class — applied to every example of an IDX images file or a CSV
// file: features only, or in the training layout (its label column is shown next to the
// prediction; datasets.h tells the two apart by the column count). Output is a table, or
// with --json one JSON document:
//   {"checkpoint": ..., "classes": [...], "predictions": [{"index": 0, "predicted": 9,
//    "class": "Ankle boot", "label": 9, "probabilities": [...]}, ...]}
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "checkpoint.h"
#include "datasets.h"
#include "device_choice.h"
#include "evaluation.h"
#include "model.h"
#include "options.h"

namespace ember::cli {

int run_predict(const PredictOptions& options) {
  Device device = choose_device(options.device);
  Checkpoint checkpoint = load_checkpoint(options.checkpoint_path);
  std::shared_ptr<nn::Sequential> model = build_model(checkpoint.model);
  check_state_fits(checkpoint.model_state, *model);
  model->load_state_dict(checkpoint.model_state);
  model->to(device);

  PredictionInputs inputs = load_prediction_inputs(options.input_path, checkpoint.model.in_features, options.csv, options.no_label,
                                                   checkpoint.input_scale);  // the model's preprocessing
  Evaluation result = evaluate(*model, inputs.features, Tensor(), device, 1000, /*keep_probabilities=*/true);
  std::int64_t count = result.total, classes = checkpoint.model.num_classes;
  const std::int64_t* predicted = count > 0 ? result.predictions.contiguous().data_ptr<std::int64_t>() : nullptr;
  const float* probabilities = count > 0 ? result.probabilities.contiguous().data_ptr<float>() : nullptr;
  const std::int64_t* labels = inputs.labels.defined() ? inputs.labels.contiguous().data_ptr<std::int64_t>() : nullptr;
  const std::vector<std::string>& names = checkpoint.class_names;
  auto name_of = [&](std::int64_t c) { return c < static_cast<std::int64_t>(names.size()) ? names[c] : std::to_string(c); };

  if (options.json) {
    nlohmann::json output = {{"checkpoint", options.checkpoint_path}, {"input", options.input_path},
                             {"classes", names}, {"predictions", nlohmann::json::array()}};
    for (std::int64_t i = 0; i < count; ++i) {
      nlohmann::json row = {{"index", i}, {"predicted", predicted[i]}, {"class", name_of(predicted[i])},
                            {"label", labels ? nlohmann::json(labels[i]) : nlohmann::json(nullptr)},
                            {"probabilities", std::vector<float>(probabilities + i * classes,
                                                                 probabilities + (i + 1) * classes)}};
      output["predictions"].push_back(row);
    }
    std::cout << output.dump(1) << "\n";
    return 0;
  }

  std::printf("%5s %5s %9s  %-12s", "index", "label", "predicted", "class");
  for (std::int64_t c = 0; c < classes; ++c) std::printf(" %7s", ("p(" + std::to_string(c) + ")").c_str());
  std::printf("\n");
  for (std::int64_t i = 0; i < count; ++i) {
    std::string label = labels ? std::to_string(labels[i]) : "-";
    std::printf("%5lld %5s %9lld  %-12s", static_cast<long long>(i), label.c_str(), static_cast<long long>(predicted[i]),
                name_of(predicted[i]).c_str());
    for (std::int64_t c = 0; c < classes; ++c) std::printf(" %7.4f", probabilities[i * classes + c]);
    std::printf("\n");
  }
  return 0;
}

}  // namespace ember::cli
