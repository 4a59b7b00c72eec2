// apps/cli/spec_model_config.cpp — the ModelConfig of `ember train --model spec:FILE` on the
// run's data: reads FILE, decides the input (images or flat features) and resolves the layers
// (model_spec.h). Every problem is the command line's: a UsageError naming the file.
#include <fstream>
#include <sstream>

#include <ember/core/error.h>

#include "model_spec.h"
#include "usage_error.h"

namespace ember::cli {

ModelConfig spec_model_config(const std::string& model_flag, const Shape& input_shape_flag, const LoadedData& data) {
  const std::string path = model_flag.substr(5);  // after "spec:"
  const std::string context = "--model " + model_flag + ": ";
  std::ifstream file(path, std::ios::binary);
  if (!file) throw UsageError(context + "cannot read " + path);
  std::ostringstream text;
  text << file.rdbuf();

  ModelConfig config;
  config.kind = "spec";
  config.in_features = data.num_features;
  config.num_classes = data.num_classes;
  try {
    Shape example = {data.num_features};
    if (spec_takes_images(text.str())) {
      // The first layer takes images: IDX images bring their shape, CSV rows need --input-shape.
      config.input_shape = !input_shape_flag.empty() ? input_shape_flag.vec() : data.image_shape;
      if (config.input_shape.empty()) {
        throw UsageError(make_message(context, "its first layer takes images: on ", data.spec,
                                      " give --input-shape C,H,W (how each example's ", data.num_features,
                                      " features form an image)"));
      }
      std::int64_t product = 1;
      bool overflow = false;
      for (std::int64_t size : config.input_shape) overflow = overflow || __builtin_mul_overflow(product, size, &product);
      if (overflow || product != data.num_features) {
        throw UsageError(make_message(context, "the input shape ", config.input_shape[0], "x", config.input_shape[1],
                                      "x", config.input_shape[2], " does not hold ", data.num_features, " features"));
      }
      example = config.input_shape;
    }
    config.spec = resolve_model_spec(text.str(), example, data.num_classes);
  } catch (const UsageError&) {
    throw;
  } catch (const ValueError& error) {
    throw UsageError(context + error.what());
  }
  return config;
}

}  // namespace ember::cli
