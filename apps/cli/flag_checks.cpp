// apps/cli/flag_checks.cpp — CLI11 validators for ember's flags (see flag_checks.h).
#include "flag_checks.h"

#include <cmath>
#include <cstdio>
#include <exception>
#include <limits>
#include <string>

#include "model_spec.h"

namespace ember::cli {

// --data: "fashion-mnist", "toy", "idx:DIR" or "csv:FILE" (the files are checked later,
// when they are read, so a missing file is an exit-1 data error, not a usage error).
std::string check_data_spec(const std::string& spec) {
  if (spec == "fashion-mnist" || spec == "toy") return "";
  if ((spec.rfind("idx:", 0) == 0 || spec.rfind("csv:", 0) == 0) && spec.size() > 4) return "";
  if (spec == "text" || (spec.rfind("text:", 0) == 0 && spec.size() > 5)) return "";  // --model gpt
  return "expected fashion-mnist, toy, idx:DIR, csv:FILE or text[:FILE], got '" + spec + "'";
}

// --model: "mlp", "cnn", "gpt" or "spec:FILE" (the file is read when training starts, model_spec.h).
std::string check_model_choice(const std::string& model) {
  if (model == "mlp" || model == "cnn" || model == "gpt" || (is_spec_model(model) && model.size() > 5)) return "";
  return "expected mlp, cnn, gpt or spec:FILE.json, got '" + model + "'";
}

// --device: "auto", "cpu", "cuda" or "cuda:N" (N a device index that fits an int; whether
// that device exists is decided later, by device_choice.cpp, as an exit-1 device error).
std::string check_device(const std::string& device) {
  if (device == "auto" || device == "cpu" || device == "cuda") return "";
  if (device.rfind("cuda:", 0) == 0 && device.size() > 5 &&
      device.find_first_not_of("0123456789", 5) == std::string::npos) {
    std::string digits = device.substr(5);
    digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size() - 1));  // "007" -> "7"
    if (digits.size() > 9) return "CUDA device index " + device.substr(5) + " is out of range";
    return "";
  }
  return "expected auto, cpu, cuda or cuda:N, got '" + device + "'";
}

// Number checks with short messages (CLI11's PositiveNumber prints the whole double range).
// Validators see the text before conversion; CLI11 reports a non-number itself as well,
// but checking here keeps every message in one style.
CLI::Validator whole_number_in(long long minimum, long long maximum) {
  return CLI::Validator(
      [minimum, maximum](const std::string& text) -> std::string {
        std::size_t used = 0;
        long long value = 0;
        try {
          value = std::stoll(text, &used);
        } catch (const std::out_of_range&) {
          if (text.find('-') != std::string::npos) return "must be at least " + std::to_string(minimum) + ", got " + text;
          return "must be at most " + std::to_string(maximum) + ", got " + text;
        } catch (const std::exception&) {
          used = 0;
        }
        if (used == 0 || used != text.size()) return "expected a whole number, got '" + text + "'";
        if (value < minimum) return "must be at least " + std::to_string(minimum) + ", got " + text;
        if (value > maximum) return "must be at most " + std::to_string(maximum) + ", got " + text;
        return "";
      },
      "INT>=" + std::to_string(minimum));
}

CLI::Validator whole_number_at_least(long long minimum) {
  return whole_number_in(minimum, std::numeric_limits<long long>::max());
}

// A real number in [low, high] (or [low, high) when !high_included), in the same style.
CLI::Validator number_in_range(double low, double high, bool high_included) {
  char limits[64];
  std::snprintf(limits, sizeof limits, "[%g, %g%c", low, high, high_included ? ']' : ')');
  return CLI::Validator(
      [low, high, high_included, range = std::string(limits)](const std::string& text) -> std::string {
        std::size_t used = 0;
        double value = 0;
        try {
          value = std::stod(text, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used == 0 || used != text.size()) return "expected a number in " + range + ", got '" + text + "'";
        if (!(value >= low && (high_included ? value <= high : value < high))) {
          return "must be in " + range + ", got " + text;
        }
        return "";
      },
      "FLOAT in " + std::string(limits));
}

CLI::Validator real_number(bool allow_zero) {
  return CLI::Validator(
      [allow_zero](const std::string& text) -> std::string {
        std::size_t used = 0;
        double value = 0;
        try {
          value = std::stod(text, &used);
        } catch (const std::out_of_range&) {
          return "must be a finite number (float32 range), got " + text;
        } catch (const std::exception&) {
          used = 0;
        }
        if (used == 0 || used != text.size()) return "expected a number, got '" + text + "'";
        // nan, inf and values beyond float32's range (1e39) would make every parameter nan.
        if (!(std::isfinite(value) && std::fabs(value) <= std::numeric_limits<float>::max())) {
          return "must be a finite number (float32 range), got " + text;
        }
        if (allow_zero ? value < 0 : value <= 0) {
          return std::string("must be ") + (allow_zero ? "non-negative" : "positive") + ", got " + text;
        }
        return "";
      },
      allow_zero ? "FLOAT>=0" : "FLOAT>0");
}

// --seed: a whole number in [-2^63, 2^64 - 1]. As torch.manual_seed, a negative seed s is
// taken modulo 2^64 (-1 is the seed 18446744073709551615), which CLI11's conversion does.
CLI::Validator seed_number() {
  return CLI::Validator(
      [](const std::string& text) -> std::string {
        const std::string digits = text.rfind('-', 0) == 0 ? text.substr(1) : text;
        if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) {
          return "expected a whole number, got '" + text + "'";
        }
        try {
          if (text[0] == '-') {
            (void)std::stoll(text);
          } else {
            (void)std::stoull(text);
          }
        } catch (const std::exception&) {
          return "must be in [-9223372036854775808, 18446744073709551615], got " + text;
        }
        return "";
      },
      "INT");
}

}  // namespace ember::cli
