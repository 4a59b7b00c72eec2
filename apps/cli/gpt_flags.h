// apps/cli/gpt_flags.h — the `ember train` flags of --model gpt (issue 21) and the checks that
// keep them apart from the classifier's: --block-size, --n-layer, --n-head, --n-embd,
// --max-steps, --eval-every, --eval-batches, and --data text[:FILE].
//
// A GPT run trains for --max-steps optimizer steps on random windows of the text, so the
// flags of epochs, classes and images mean nothing there (a usage error, exit 2, naming the
// flag), and the GPT's flags mean nothing to an MLP or CNN. With --model gpt, unless given:
// --optimizer adamw, --lr 1e-3, --weight-decay 0.1 (nanoGPT's), --data text (the default
// corpus, /usr/share/dict/words).
#pragma once

#include <CLI/CLI.hpp>

#include "options.h"

namespace ember::cli {

void add_gpt_options(CLI::App& command, TrainOptions& train);
// Called from the train command's callback: the defaults above, and usage errors for flags
// that do not go with the chosen model.
void check_gpt_options(const CLI::App& command, TrainOptions& train);

}  // namespace ember::cli
