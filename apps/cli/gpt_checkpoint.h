// apps/cli/gpt_checkpoint.h — the checkpoint of `ember train --model gpt`, read by --resume
// and `ember sample`.
//
// One safetensors file (nn/serialize.h), like the classifier's checkpoint (checkpoint.h) but
// with its own format tag, so neither command mistakes one for the other:
//   tensors   model.<name>      the GPT's state_dict (lm_head.weight and the tied
//                               transformer.wte.weight both, as PyTorch's state_dict has)
//             optimizer.<key>   AdamW's state (moments, steps, the two groups' options)
//             scheduler.<key>   the --lr-schedule's state (none for a constant lr)
//   metadata  format            "ember-gpt-checkpoint/1"
//             step              optimizer steps taken
//             generator         the default generator's state (hex), so a resumed run draws
//                               the batches the uninterrupted one would have; under
//                               ember-run, rank 0's
//             world_size        under ember-run (absent: 1): the job's ranks, and
//             generator.rank<r> rank r's generator, for r = 1 .. world_size - 1 (each rank
//                               draws its own batches)
//             config            JSON: the model's shape (vocab_size, block_size, n_layer,
//                               n_head, n_embd, dropout, bias), the vocabulary (UTF-8: the
//                               characters of ids 0, 1, ...) and the --data it trained on
//             train_config      the run's effective options, as a --config file
// Reading checks what a crafted or damaged file could get wrong (IOError naming the file):
// the format, every number, the config against nn::check_gpt_config, the vocabulary (sorted,
// distinct, valid UTF-8, vocab_size of it), and every tensor's name and shape against the
// model the config builds.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <ember/data/text_corpus.h>
#include <ember/nn/gpt.h>
#include <ember/nn/module.h>

namespace ember::cli {

constexpr const char* kGptCheckpointFormat = "ember-gpt-checkpoint/1";

struct GptCheckpoint {
  nn::GPTConfig config;
  data::CharVocabulary vocabulary;
  std::string data_spec;     // --data of the run: "text" or "text:FILE"
  std::int64_t step = 0;
  // The default generator's state of every rank: [0] alone without ember-run.
  std::vector<std::vector<std::uint8_t>> generator_states;
  nn::StateDict model_state, optimizer_state, scheduler_state;
  nn::StateDict grad_scaler_state;  // --precision fp16: amp::GradScaler's
  std::string train_config;  // the run's options as a --config file (JSON text)
};

void save_gpt_checkpoint(const GptCheckpoint& checkpoint, const std::string& path);
GptCheckpoint load_gpt_checkpoint(const std::string& path);

// Whether the safetensors file at `path` carries the GPT format tag (false for the
// classifier's checkpoints; IOError when it is not a readable safetensors file).
bool is_gpt_checkpoint(const std::string& path);

// The GPT the checkpoint describes, with its weights loaded.
std::shared_ptr<nn::GPT> build_gpt(const GptCheckpoint& checkpoint);

}  // namespace ember::cli
