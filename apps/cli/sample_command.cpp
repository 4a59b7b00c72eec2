// apps/cli/sample_command.cpp — `ember sample`: text from a GPT checkpoint of `ember train
// --model gpt` (issue 21), nanoGPT's sample.py.
//
//   ember sample --checkpoint gpt.st [--prompt TEXT] [--tokens 500] [--temperature 0.8]
//                [--top-k 200] [--seed 1337] [--num-samples 1] [--no-cache] [--device D]
//
// manual_seed(--seed), then for each sample nn::generate (nn/gpt.h): the prompt, encoded
// with the checkpoint's vocabulary, grows by --tokens characters, each drawn with
// multinomial from the default generator after --temperature and --top-k, as PyTorch does;
// the model keeps a KV cache (--no-cache recomputes the whole context every step, the same
// text, slower). Each sample is printed whole (prompt included), samples separated by a
// line of dashes. The defaults are nanoGPT's sample.py's (its start "\n" is the default
// prompt), but one sample instead of ten.
#include <cstdio>
#include <iostream>

#include <ember/core/error.h>
#include <ember/core/factories.h>
#include <ember/core/random.h>
#include <ember/nn/gpt.h>

#include "device_choice.h"
#include "gpt_checkpoint.h"
#include "options.h"
#include "usage_error.h"

namespace ember::cli {

int run_sample(const SampleOptions& options) {
  GptCheckpoint checkpoint = load_gpt_checkpoint(options.checkpoint_path);
  const std::string prompt = options.prompt.value_or("\n");
  std::vector<std::int64_t> ids;
  try {
    ids = checkpoint.vocabulary.encode_utf8(prompt);
  } catch (const Error& error) {
    throw UsageError(make_message(options.prompt ? "--prompt: " : "the default prompt \"\\n\": ", error.what(),
                                  options.prompt ? "" : " (give a --prompt made of its characters)"));
  }
  if (ids.empty()) throw UsageError("--prompt is empty: the model needs at least one character to continue");
  const Device device = choose_device(options.device);
  std::shared_ptr<nn::GPT> model = build_gpt(checkpoint);
  model->to(device);
  model->eval();

  nn::GenerateOptions generate;
  generate.max_new_tokens = options.tokens;
  generate.temperature = options.temperature;
  if (options.top_k > 0) generate.top_k = options.top_k;
  generate.use_cache = !options.no_cache;
  const Tensor start =
      from_blob(ids.data(), {1, static_cast<std::int64_t>(ids.size())}, TensorOptions().dtype(kLong)).clone().to(device);
  manual_seed(options.seed);
  for (std::int64_t sample = 0; sample < options.num_samples; ++sample) {
    if (sample > 0) std::cout << "---------------\n";
    Tensor tokens = nn::generate(*model, start, generate).to(kCPU).contiguous();
    const std::int64_t* data = tokens.data_ptr<std::int64_t>();
    std::cout << checkpoint.vocabulary.decode(std::vector<std::int64_t>(data, data + tokens.numel())) << "\n"
              << std::flush;
  }
  return 0;
}

}  // namespace ember::cli
