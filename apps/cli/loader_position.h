// apps/cli/loader_position.h — `ember train --save-every STEPS`: where a run stands inside an
// epoch, as a mid-epoch checkpoint records it, and how the epoch's loader pass resumes there.
//
// An epoch's batches follow from the default generator's state before its loader pass
// begins: DataLoader::begin draws the base seed and RandomSampler the shuffle seed from
// it (a DistributedSampler shuffles from --seed + epoch instead, still after the same
// base-seed draw). After that, the generator goes on to dropout masks. So a mid-epoch
// checkpoint records, besides everything an epoch checkpoint holds (whose "generator" is
// then the state *now*, after the last step's dropout):
//   - the number of batches of the epoch already trained;
//   - the generator's state at the start of the epoch's pass, from which the same order
//     is drawn again (a few bytes instead of the permutation);
//   - the epoch's running totals (the example-weighted loss sum, correct predictions and
//     examples seen) of every rank, so the epoch's logged train_loss and train_acc equal
//     the uninterrupted run's, bit for bit (each rank continues its own sum).
// Resuming, the pass is begun with the epoch-start state (the same draws, the same order),
// then the checkpoint's current state is put back, and the pass starts at the next batch
// without loading the ones before (DataLoader::begin_at). With --workers the batches are
// the same (the loader hands them out in order), and under ember-run every rank skips the
// same batches of its own share.
// Everything that decides the epoch's batches must be unchanged, even with
// --allow-config-change: the data, --val-split, --batch-size, --drop-last, --seed and the
// world size (check_mid_epoch_resume).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ember/data/dataloader.h>

#include "options.h"

namespace ember::cli {

struct LoaderPosition {
  std::int64_t batches_done = 0;       // batches of the current epoch trained (0: at an epoch's end)
  std::int64_t batches_in_epoch = 0;   // the loader's size when it was written (a check on resume)
  std::vector<std::uint8_t> epoch_start_generator;
  // The epoch's running totals so far, one entry per rank (index: rank).
  std::vector<double> loss_sums;
  std::vector<std::int64_t> correct;
  std::vector<std::int64_t> seen;

  bool mid_epoch() const { return batches_done > 0; }
};

// The checkpoint's "position" metadata (JSON; the generator state hex-encoded, the loss
// sums with every digit) and back. IOError naming `path` when it is damaged.
std::string position_to_text(const LoaderPosition& position);
LoaderPosition position_from_text(const std::string& text, const std::string& path);

// Refuses (ValueError, even with --allow-config-change) to continue a mid-epoch checkpoint
// when what decides the epoch's batches changed or --epochs ends before its epoch (checked
// before anything is built), or when the loader has another number of batches per epoch
// (`batches_now`, checked once it is built).
void check_mid_epoch_resume(const TrainOptions& saved, const TrainOptions& now, const LoaderPosition& position,
                            std::int64_t saved_epoch, const std::string& path);
void check_mid_epoch_batches(const TrainOptions& now, const LoaderPosition& position, std::int64_t saved_epoch,
                             std::int64_t batches_now, const std::string& path);

// The batches of one epoch, for a range-for: begin() starts the loader's pass and records
// the default generator's state before it in `epoch_start` (what a mid-epoch checkpoint
// saves). Given a `resume` position, it starts the pass at that batch instead, with that
// position's epoch-start state for the pass's draws, and then puts back the generator
// state that was current when it was called (the checkpoint's, already restored).
class EpochBatches {
 public:
  EpochBatches(data::DataLoader& loader, std::vector<std::uint8_t>& epoch_start, const LoaderPosition* resume)
      : loader_(loader), epoch_start_(epoch_start), resume_(resume) {}
  data::DataLoader::Iterator begin();
  data::DataLoader::Iterator end() { return loader_.end(); }

 private:
  data::DataLoader& loader_;
  std::vector<std::uint8_t>& epoch_start_;
  const LoaderPosition* resume_;
};

}  // namespace ember::cli
