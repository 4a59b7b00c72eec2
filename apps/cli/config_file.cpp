// apps/cli/config_file.cpp — JSON config files for `ember train`, driven by CLI11's own option
// list (see config_file.h for the schema).
//
// CLI11 reads config files only for the top-level App, and the file is named by
// `ember train --config`. So `--config` hands its path to a hidden top-level config option
// the moment it is parsed; after the whole command line is parsed, CLI11 reads that file with
// JsonConfig and fills every option of `train` that the command line left empty. Each
// option's kind (switch, list, integer, number, text) comes from CLI11 too: the type name
// it derived from the bound variable ("INT", "UINT", "FLOAT", "TEXT") and its arity.
#include "config_file.h"

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace ember::cli {

namespace {

using OrderedJson = nlohmann::ordered_json;

// The hidden top-level option CLI11 reads the file from (not for users: `ember train --config`).
constexpr const char* kConfigCarrier = "--train-config-file";

// The option a config key names: a long flag of `train` that may come from a file.
CLI::Option* option_for_key(const CLI::App& train, const std::string& key) {
  if (key.empty() || key[0] == '-') return nullptr;
  auto* option = const_cast<CLI::Option*>(train.get_option_no_throw("--" + key));
  if (option == nullptr || !option->get_configurable() || option == train.get_help_ptr() ||
      option == train.get_help_all_ptr()) {
    return nullptr;
  }
  const std::vector<std::string>& long_names = option->get_lnames();
  if (std::find(long_names.begin(), long_names.end(), key) == long_names.end()) return nullptr;
  return option;
}

bool is_switch(const CLI::Option& option) { return option.get_expected_min() == 0; }
bool is_list(const CLI::Option& option) { return option.get_items_expected_max() > 1; }

// What each value of the option is: "INT", "UINT", "FLOAT" or "TEXT" (CLI11's name for the
// bound variable's type, before the validators' descriptions: "INT:INT>=1" -> "INT").
std::string value_kind(const CLI::Option& option) {
  std::string type = option.get_type_name();
  type = type.substr(0, type.find(':'));
  std::string kind;
  for (char c : type) {
    if (c != '[' && c != ']') kind += c;
  }
  return kind;
}

// "an integer", "a number", "a string": what a JSON value of that kind is called.
std::string kind_words(const std::string& kind, bool plural) {
  if (kind == "INT" || kind == "UINT") return plural ? "integers" : "an integer";
  if (kind == "FLOAT") return plural ? "numbers" : "a number";
  return plural ? "strings" : "a string";
}

bool has_kind(const nlohmann::json& value, const std::string& kind) {
  if (kind == "INT" || kind == "UINT") return value.is_number_integer();
  if (kind == "FLOAT") return value.is_number();
  return value.is_string();
}

// The command-line text of one JSON value (numbers as JSON writes them: shortest round trip).
std::string value_text(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

std::string unknown_key_message(const std::string& file, const std::string& key) {
  std::string message = file + ": unknown key \"" + key + "\" (keys are ember train's flags without the dashes";
  std::string hyphenated = key;
  for (char& c : hyphenated) c = c == '_' ? '-' : c;
  if (hyphenated != key) message += "; did you mean \"" + hyphenated + "\"?";
  return message + ")";
}

OrderedJson default_value(CLI::Option& option, const std::string& kind);

// The config file as CLI11 config items for `train`, every key and type checked.
class JsonConfig : public CLI::Config {
 public:
  JsonConfig(CLI::App& train, const CLI::Option& carrier) : train_(train), carrier_(carrier) {}

  // Remembers every option's default (call once all options are added, before parsing).
  void record_defaults() {
    for (CLI::Option* option : train_.get_options()) {
      if (option->get_lnames().empty() || option_for_key(train_, option->get_lnames().front()) != option) continue;
      if (!is_switch(*option)) defaults_[option->get_lnames().front()] = default_value(*option, value_kind(*option));
    }
  }

  std::string to_config(const CLI::App*, bool, bool, std::string) const override {
    return effective_config_json(train_);
  }

  std::vector<CLI::ConfigItem> from_config(std::istream& input) const override {
    const std::string file = carrier_.results().empty() ? "config" : carrier_.results().back();
    nlohmann::json document;
    try {
      document = nlohmann::json::parse(input);
    } catch (const nlohmann::json::exception& error) {
      throw CLI::ConfigError(file + ": not valid JSON (" + error.what() + ")");
    }
    if (!document.is_object()) {
      throw CLI::ConfigError(file + ": expected a JSON object of options ({\"epochs\": 10, ...}), got " +
                             document.dump().substr(0, 80));
    }
    std::vector<CLI::ConfigItem> items;
    for (const auto& [key, value] : document.items()) {
      CLI::Option* option = option_for_key(train_, key);
      if (option == nullptr) {
        const CLI::Option* other = train_.get_option_no_throw("--" + key);
        if (other != nullptr && !other->get_configurable() && !key.empty() && key[0] != '-') {
          throw CLI::ConfigError(file + ": \"" + key + "\" cannot be set in a config file (only on the command line)");
        }
        throw CLI::ConfigError(unknown_key_message(file, key));
      }
      if (value.is_null()) continue;  // "not given": the flag's default
      std::vector<std::string> inputs = inputs_of(*option, key, value, file);  // checks the type
      if (inputs.empty()) continue;  // a switch set to false
      // A value equal to the flag's default is taken as not given: --print-config writes every
      // default (e.g. "channels" of an mlp, "momentum" 0 with adam), and a flag given where it
      // means nothing would be refused.
      auto found = defaults_.find(key);
      if (found != defaults_.end() && nlohmann::json::parse(found->second.dump()) == value) continue;
      items.push_back(CLI::ConfigItem{{train_.get_name()}, key, std::move(inputs)});
    }
    return items;
  }

 private:
  static std::vector<std::string> inputs_of(const CLI::Option& option, const std::string& key,
                                            const nlohmann::json& value, const std::string& file) {
    const std::string flag = "--" + key;
    auto wrong = [&](const std::string& expected) {
      return CLI::ConfigError(file + ": " + flag + " expects " + expected + ", got " + value.dump());
    };
    if (is_switch(option)) {
      if (!value.is_boolean()) throw wrong("true or false (it is a switch)");
      if (!value.get<bool>()) return {};
      return {"true"};
    }
    const std::string kind = value_kind(option);
    if (is_list(option)) {
      if (!value.is_array()) throw wrong("a list of " + kind_words(kind, true));
      std::vector<std::string> inputs;
      for (const nlohmann::json& element : value) {
        if (!has_kind(element, kind)) throw wrong("a list of " + kind_words(kind, true));
        inputs.push_back(value_text(element));
      }
      return inputs;
    }
    if (!has_kind(value, kind)) throw wrong(kind_words(kind, false));
    return {value_text(value)};
  }

  CLI::App& train_;
  const CLI::Option& carrier_;
  std::map<std::string, OrderedJson> defaults_;
};

// The value `text` (a default, as CLI11 writes the bound variable) as JSON of `kind`.
OrderedJson typed(const std::string& text, const std::string& kind) {
  try {
    if (kind == "INT") return std::stoll(text);
    if (kind == "UINT") return std::stoull(text);
    if (kind == "FLOAT") return std::stod(text);
  } catch (const std::exception&) {
    // not a number after all: kept as text below
  }
  return text;
}

// Whether `value` passes every check of `option` (a default that does not — --input-scale's
// 0, "the data's own" — means "not given", printed as null).
bool passes_checks(CLI::Option& option, const std::string& value) {
  for (int index = 0;; ++index) {
    CLI::Validator* validator = nullptr;
    try {
      validator = option.get_validator(index);
    } catch (const CLI::OptionNotFound&) {
      return true;
    }
    std::string copy = value;
    if (!(*validator)(copy).empty()) return false;
  }
}

// The elements of a list default as CLI11 writes it: "[256,128]" -> {"256", "128"}.
std::vector<std::string> list_elements(std::string text) {
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') text = text.substr(1, text.size() - 2);
  std::vector<std::string> elements;
  if (text.empty()) return elements;
  std::size_t start = 0;
  while (true) {
    std::size_t comma = text.find(',', start);
    elements.push_back(text.substr(start, comma - start));
    if (comma == std::string::npos) return elements;
    start = comma + 1;
  }
}

// The value of an option the command line and the file left out: its bound variable's
// current value (the default, or what train's callback made of it), or null when that is
// the "automatic" value no user could write (an empty path or list, a refused 0).
OrderedJson default_value(CLI::Option& option, const std::string& kind) {
  const std::string saved = option.get_default_str();
  option.capture_default_str();  // the variable's value now; restored below (--help shows default_str)
  const std::string text = option.get_default_str();
  option.default_str(saved);
  if (is_list(option)) {
    std::vector<std::string> elements = list_elements(text);
    if (elements.empty()) return nullptr;
    OrderedJson list = OrderedJson::array();
    for (const std::string& element : elements) {
      if (!passes_checks(option, element)) return nullptr;
      list.push_back(typed(element, kind));
    }
    return list;
  }
  if (text.empty() || !passes_checks(option, text)) return nullptr;
  return typed(text, kind);
}

// The value of an option given on the command line or in the file, converted as the option
// converts it (so --seed -1 is 18446744073709551615, as the run uses it).
OrderedJson given_value(CLI::Option& option, const std::string& kind) {
  if (is_list(option)) {
    if (kind == "INT") return option.as<std::vector<std::int64_t>>();
    if (kind == "UINT") return option.as<std::vector<std::uint64_t>>();
    if (kind == "FLOAT") return option.as<std::vector<double>>();
    return option.as<std::vector<std::string>>();
  }
  if (kind == "INT") return option.as<std::int64_t>();
  if (kind == "UINT") return option.as<std::uint64_t>();
  if (kind == "FLOAT") return option.as<double>();
  return option.as<std::string>();
}

}  // namespace

void add_config_file_options(CLI::App& app, CLI::App& train) {
  CLI::Option* carrier = app.set_config(kConfigCarrier, "", "internal: the file of ember train --config");
  carrier->group("");  // hidden: users name the file with `ember train --config`
  auto formatter = std::make_shared<JsonConfig>(train, *carrier);
  formatter->record_defaults();
  app.config_formatter(formatter);
  train.add_option("--config", "Read options from a JSON file: keys are these flags without dashes, flags on the "
                               "command line win (docs/cli.md)")
      ->type_name("FILE.json")
      ->configurable(false)
      ->trigger_on_parse()
      ->each([carrier](const std::string& path) { carrier->add_result(path); });
  const std::string print_help = "Print the effective options as JSON (a --config file) and exit";
  train.add_flag("--print-config", print_help)->configurable(false);
}

bool print_config_requested(const CLI::App& train) {
  const CLI::Option* option = train.get_option_no_throw("--print-config");
  return train.parsed() && option != nullptr && option->count() > 0;
}

std::string effective_config_json(CLI::App& train) {
  OrderedJson config = OrderedJson::object();
  for (CLI::Option* option : train.get_options()) {
    if (option->get_lnames().empty()) continue;
    const std::string key = option->get_lnames().front();
    if (option_for_key(train, key) != option) continue;  // help, --config, --print-config
    if (is_switch(*option)) {
      bool on = false;
      if (option->count() > 0) on = option->as<bool>();
      config[key] = on;
      continue;
    }
    const std::string kind = value_kind(*option);
    config[key] = option->count() > 0 ? given_value(*option, kind) : default_value(*option, kind);
  }
  return config.dump(2);
}

}  // namespace ember::cli
