// apps/cli/gpt_training.h — `ember train --model gpt`: a character-level GPT (nn/gpt.h) trained
// on a text file, nanoGPT's loop (issue 21).
//
//   ember train --model gpt --data text:FILE --block-size 64 --n-layer 2 --n-head 4 --n-embd 128
//               --max-steps 2000 --batch-size 32 [--lr 1e-3] [--weight-decay 0.1]
//               [--lr-schedule cosine --warmup-steps N --lr-min X] [--clip-grad-norm 1]
//               [--eval-every 200 --eval-batches 20] [--dropout P] [--save C] [--log L]
//
// The loop, which tests/reference/gen_cli_gpt.py repeats in PyTorch step for step:
//   manual_seed(--seed); the file's characters -> ids (data/text_corpus.h); first 90 % train
//   model = GPT(vocab, T, L, Hd, C, dropout)                  (consumes the generator: init)
//   AdamW(two groups: parameters with >= 2 dims decay by --weight-decay, the rest do not;
//         lr, betas (0.9, 0.95))
//   for step = 1 .. --max-steps:
//     ix = randint(len(train) - T, (B,)); x = train[i : i+T], y = train[i+1 : i+T+1]
//     loss = cross_entropy(model(x), y); backward; [clip_grad_norm_]; step; schedule; zero_grad
//     after every --eval-every steps and the last: the mean loss of --eval-batches random
//     batches of train, then of val, in eval mode without gradients (nanoGPT's estimate_loss)
// Without FILE (--data text) the corpus is /usr/share/dict/words (Debian's wamerican).
//
// Log events (--log, one JSON object per line):
//   {"event": "step", "step": 10, "loss": 3.21, "lr": 0.001, "tokens_per_s": 51200.0}   (--log-every N)
//   {"event": "eval", "step": 200, "train_loss": 2.1, "val_loss": 2.2, "tokens_per_s": ..., "elapsed_s": ...}
//   {"event": "summary", "train_loss": ..., "val_loss": ..., "tokens_per_s": ..., "elapsed_s": ...,
//    "steps": 2000, "device": "cpu"}
// tokens_per_s counts training tokens (B · T per step) over the time spent in training steps.
//
// --save writes the model, the optimizer, the schedule and the generator after every
// evaluation and at the end (one safetensors file, "format": "ember-gpt-checkpoint/1", the
// vocabulary and the model's shape in its metadata). A Ctrl-C or SIGTERM stops after the
// current step, saves (with --save) and exits 130 or 143.
// --resume C continues such a checkpoint exactly (the options that change the numbers must be
// the checkpoint's, or --allow-config-change; --max-steps may grow); --tensorboard writes the
// log's events as scalars. The checkpoint's layout: gpt_checkpoint.h.
// Under ember-run (WORLD_SIZE > 1), nanoGPT's DDP: rank r seeds --seed + r and draws its own
// batches, DistributedDataParallel starts the ranks from rank 0's weights and averages the
// gradients, the logged loss is the mean over ranks, and rank 0 evaluates, logs and saves
// (the checkpoint keeps every rank's generator). tests/reference/gen_cli_gpt_ddp.py is the
// PyTorch twin. Not yet for the GPT: --grad-accum (a usage error); `ember eval` / `predict`
// read classifiers (`ember sample` and `ember info` read a GPT's checkpoint).
#pragma once

#include "options.h"

namespace ember::cli {

// The exit code: 0 trained; 1 (thrown Error) bad data or a failed run; 130/143 interrupted.
int run_train_gpt(const TrainOptions& options);

// The default corpus of --data text.
constexpr const char* kDefaultTextCorpus = "/usr/share/dict/words";

}  // namespace ember::cli
