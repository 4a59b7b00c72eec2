// apps/cli/loader_position.cpp — mid-epoch positions and resumed passes (see loader_position.h).
#include "loader_position.h"

#include <cstdio>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include <ember/core/error.h>
#include <ember/core/random.h>

#include "json_field.h"
#include "metadata_text.h"
#include "resume_check.h"

namespace ember::cli {

namespace {

// The flags whose change alters an epoch's batches (config_differences names them so).
bool decides_batches(const std::string& difference) {
  for (const char* flag : {"--data", "--label-column", "--header/--no-header", "--val-split", "--batch-size",
                           "--drop-last", "--seed", "world size"}) {
    if (difference.rfind(std::string(flag) + ":", 0) == 0) return true;
  }
  return false;
}

}  // namespace

std::string position_to_text(const LoaderPosition& position) {
  nlohmann::json loss_sums = nlohmann::json::array();
  for (double sum : position.loss_sums) loss_sums.push_back(exact_text(sum));
  nlohmann::json json = {{"batches_done", position.batches_done},
                         {"batches_in_epoch", position.batches_in_epoch},
                         {"epoch_start_generator", to_hex(position.epoch_start_generator)},
                         {"loss_sums", loss_sums},
                         {"correct", position.correct},
                         {"seen", position.seen}};
  return json.dump();
}

LoaderPosition position_from_text(const std::string& text, const std::string& path) {
  LoaderPosition position;
  try {
    nlohmann::json json = nlohmann::json::parse(text);
    position.batches_done = json_get<std::int64_t>(json.at("batches_done"));
    position.batches_in_epoch = json_get<std::int64_t>(json.at("batches_in_epoch"));
    position.epoch_start_generator = from_hex(json_get<std::string>(json.at("epoch_start_generator")), path, "epoch-start generator state");
    for (const auto& sum : json.at("loss_sums")) position.loss_sums.push_back(number_from_text(sum.get<std::string>(), path, "position's loss sum"));
    position.correct = json_get<std::vector<std::int64_t>>(json.at("correct"));
    position.seen = json_get<std::vector<std::int64_t>>(json.at("seen"));
  } catch (const nlohmann::json::exception& error) {
    throw IOError(path + ": the checkpoint's position metadata is damaged (" + error.what() + ")");
  }
  EMBER_CHECK(position.batches_done > 0 && position.batches_done < position.batches_in_epoch, IOError, path,
              ": the checkpoint's position, batch ", position.batches_done, " of ", position.batches_in_epoch,
              ", is not inside an epoch");
  EMBER_CHECK(!position.loss_sums.empty() && position.correct.size() == position.loss_sums.size() &&
                  position.seen.size() == position.loss_sums.size(),
              IOError, path, ": the checkpoint's position has running totals for ", position.loss_sums.size(), ", ",
              position.correct.size(), " and ", position.seen.size(), " ranks (expected one each per rank)");
  return position;
}

namespace {
std::string mid_epoch_place(const LoaderPosition& position, std::int64_t saved_epoch, const std::string& path) {
  return make_message("--resume ", path, ": the checkpoint stands inside epoch ", saved_epoch + 1, " (after batch ",
                      position.batches_done, " of ", position.batches_in_epoch, ")");
}
}  // namespace

void check_mid_epoch_resume(const TrainOptions& saved, const TrainOptions& now, const LoaderPosition& position,
                            std::int64_t saved_epoch, const std::string& path) {
  const std::string where = mid_epoch_place(position, saved_epoch, path);
  EMBER_CHECK(now.epochs > saved_epoch, ValueError, where, ": --epochs ", now.epochs,
              " ends before that epoch (--epochs counts every epoch, those before --resume included)");
  std::string changed;
  for (const std::string& difference : config_differences(saved, now)) {
    if (decides_batches(difference)) changed += "\n  " + difference;
  }
  if (!changed.empty()) {
    throw ValueError(where + ", and these options decide that epoch's batches, so they cannot change even with "
                             "--allow-config-change:" +
                     changed + "\nresume with the checkpoint's values, or from a checkpoint written at an epoch's end");
  }
}

void check_mid_epoch_batches(const TrainOptions& now, const LoaderPosition& position, std::int64_t saved_epoch,
                             std::int64_t batches_now, const std::string& path) {
  const std::string where = mid_epoch_place(position, saved_epoch, path);
  EMBER_CHECK(batches_now == position.batches_in_epoch, ValueError, where, ", but an epoch now has ", batches_now,
              " batches: the data changed since it was written");
  EMBER_CHECK(static_cast<std::int64_t>(position.loss_sums.size()) == now.world_size, ValueError, where,
              ", written by ", position.loss_sums.size(), " ranks; now ", now.world_size);
}

data::DataLoader::Iterator EpochBatches::begin() {
  Generator& generator = default_generator();
  if (resume_ == nullptr) {
    epoch_start_ = generator.get_state();
    return loader_.begin();
  }
  const std::vector<std::uint8_t> now = generator.get_state();
  epoch_start_ = resume_->epoch_start_generator;
  generator.set_state(epoch_start_);
  data::DataLoader::Iterator rest = loader_.begin_at(resume_->batches_done);
  generator.set_state(now);
  return rest;
}

}  // namespace ember::cli
