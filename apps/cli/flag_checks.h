// apps/cli/flag_checks.h — the checks CLI11 runs on ember's flag values: the value
// validators (whole numbers in a range, real numbers, --data / --model / --device spellings,
// --seed) and the limits they enforce. A wrong value is a usage error (exit 2) that names the
// flag and the value. Shared by main.cpp and train_flags.cpp, the files that include CLI11
// (a slow header: keep it out of others).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace ember::cli {

// --batch-size: beyond 2^31 - 1 examples no batch fits in memory; larger values only
// overflowed the batch arithmetic. --workers: a thread per worker; 256 is far more than
// any host has cores (a failed thread start is still a clean error: data/dataloader.cpp).
constexpr long long kMaxBatchSize = 2147483647;
constexpr long long kMaxWorkers = 256;

// --data: "fashion-mnist", "toy", "idx:DIR", "csv:FILE" or "text[:FILE]" ("" when valid, else why not).
std::string check_data_spec(const std::string& spec);
// --model: "mlp", "cnn", "gpt" or "spec:FILE".
std::string check_model_choice(const std::string& model);
// --device: "auto", "cpu", "cuda" or "cuda:N".
std::string check_device(const std::string& device);

CLI::Validator whole_number_in(long long minimum, long long maximum);
CLI::Validator whole_number_at_least(long long minimum);
CLI::Validator number_in_range(double low, double high, bool high_included);
// A finite real number > 0 (or >= 0 with allow_zero).
CLI::Validator real_number(bool allow_zero);
// --seed: a whole number in [-2^63, 2^64 - 1], negative ones taken modulo 2^64 (torch.manual_seed).
CLI::Validator seed_number();

}  // namespace ember::cli
