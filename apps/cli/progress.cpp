// apps/cli/progress.cpp — the progress bar and the plain progress lines (see progress.h).
#include "progress.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

namespace ember::cli {

std::string format_duration(double seconds) {
  auto total = static_cast<std::int64_t>(std::max(0.0, std::round(seconds)));
  char text[32];
  std::snprintf(text, sizeof text, "%lld:%02lld:%02lld", static_cast<long long>(total / 3600),
                static_cast<long long>(total / 60 % 60), static_cast<long long>(total % 60));
  return text;
}

ProgressReporter::Style ProgressReporter::detect_style(bool quiet) {
  if (quiet) return Style::Quiet;
  return isatty(fileno(stdout)) ? Style::Bar : Style::Lines;
}

ProgressReporter::ProgressReporter(Style style, std::int64_t epochs, std::int64_t batches_per_epoch)
    : style_(style),
      epochs_(epochs),
      batches_per_epoch_(batches_per_epoch),
      // About ten lines per epoch; every batch when an epoch has ten batches or fewer.
      line_every_(std::max<std::int64_t>(1, batches_per_epoch / 10)) {}

void ProgressReporter::start_epoch(std::int64_t epoch) {
  epoch_ = epoch;
  epoch_examples_ = 0;
  loss_sum_ = 0.0;
  loss_count_ = 0;
  epoch_start_ = std::chrono::steady_clock::now();
  last_draw_ = epoch_start_ - std::chrono::seconds(1);
}

void ProgressReporter::batch_done(std::int64_t batch, double loss, std::int64_t batch_examples) {
  epoch_examples_ += batch_examples;
  loss_sum_ += loss;
  ++loss_count_;
  last_loss_ = loss;
  if (style_ == Style::Quiet) return;
  if (style_ == Style::Bar) {
    draw_bar(batch, batch + 1 == batches_per_epoch_);
    return;
  }
  if (batch % line_every_ != 0 && batch + 1 != batches_per_epoch_) return;
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - epoch_start_).count();
  double rate = elapsed > 0 ? epoch_examples_ / elapsed : 0.0;
  double eta = (batch + 1) > 0 ? elapsed / (batch + 1) * (batches_per_epoch_ - batch - 1) : 0.0;
  // The tutorial prints the batch's own loss with two decimals (its f"{loss:.2f}").
  std::printf("Epoch: %03lld/%03lld | Batch %03lld/%03lld | Train Loss: %.2f | %.0f samples/s | ETA %s\n",
              static_cast<long long>(epoch_ + 1), static_cast<long long>(epochs_), static_cast<long long>(batch),
              static_cast<long long>(batches_per_epoch_), loss, rate, format_duration(eta).c_str());
  std::fflush(stdout);
}

void ProgressReporter::draw_bar(std::int64_t batch, bool force) {
  auto now = std::chrono::steady_clock::now();
  // Redraw at most ten times a second: a terminal is slow compared with a small batch.
  if (!force && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  double elapsed = std::chrono::duration<double>(now - epoch_start_).count();
  double rate = elapsed > 0 ? epoch_examples_ / elapsed : 0.0;
  double eta = elapsed / (batch + 1) * (batches_per_epoch_ - batch - 1);
  constexpr int kWidth = 24;
  int filled = static_cast<int>(kWidth * (batch + 1) / std::max<std::int64_t>(1, batches_per_epoch_));
  std::string bar(filled, '=');
  if (filled < kWidth) bar += '>' + std::string(kWidth - filled - 1, ' ');
  std::printf("\rEpoch %lld/%lld [%s] %lld/%lld  loss %.4f  %.0f samples/s  ETA %s \x1b[K",
              static_cast<long long>(epoch_ + 1), static_cast<long long>(epochs_), bar.c_str(),
              static_cast<long long>(batch + 1), static_cast<long long>(batches_per_epoch_),
              loss_sum_ / std::max<std::int64_t>(1, loss_count_), rate, format_duration(eta).c_str());
  std::fflush(stdout);
}

void ProgressReporter::end_epoch(double train_loss, double train_acc, double val_loss, double val_acc,
                                 double samples_per_s) {
  if (style_ == Style::Quiet) return;
  if (style_ == Style::Bar) std::printf("\r\x1b[K");
  std::printf("Epoch: %03lld/%03lld | train loss %.4f | train acc %.2f%%", static_cast<long long>(epoch_ + 1),
              static_cast<long long>(epochs_), train_loss, 100.0 * train_acc);
  if (!std::isnan(val_loss)) std::printf(" | val loss %.4f", val_loss);
  if (!std::isnan(val_acc)) std::printf(" | val acc %.2f%%", 100.0 * val_acc);
  std::printf(" | %.0f samples/s\n", samples_per_s);
  std::fflush(stdout);
}

}  // namespace ember::cli
