// apps/cli/config_file.h — `ember train --config FILE.json` and `--print-config`.
//
// A config file is one JSON object whose keys are `ember train`'s long flags without their
// dashes, spelled exactly as the flags are ("batch-size", never "batch_size"):
//   {"data": "toy", "hidden": [30, 20], "epochs": 6, "lr": 0.1, "drop-last": true}
// Values have the flag's type: a JSON integer for a whole-number flag, a number for a real
// one, a string for a text one, a list for a comma-separated one (--hidden 30,20: [30, 20]),
// true or false for a switch (false: as if the switch were not given), null for "not given"
// (the flag's default, e.g. --input-scale's "the data's own"). Flags on the command line win
// over the file. An unknown key or a value of the wrong type is a usage error (exit 2) naming
// the key; a value the flag refuses is refused with the flag's own message.
//
// Nothing here lists the flags: the keys are read from CLI11's option list of the `train`
// sub-command (main.cpp), so a flag added there is a config key at once. CLI11 does the
// rest as for any config file: JsonConfig (config_file.cpp) is a CLI::Config formatter that
// turns the JSON into CLI11's config items, and CLI11 applies them to the options the command
// line left empty, running the same validators, exclusions and callbacks.
//
// --print-config prints the effective configuration — every flag with its value after the
// file and the command line are merged (defaults included) — in the same schema, so its
// output is a config file that reproduces the run. main.cpp also keeps that text in
// TrainOptions::config_json; checkpoints store it, and `ember info --checkpoint C
// --print-config` prints it back (docs/cli.md "Config files").
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace ember::cli {

// Adds --config FILE.json and --print-config to `train`, a sub-command of `app` (whose
// CLI11 config machinery reads the file), after all of its other options.
void add_config_file_options(CLI::App& app, CLI::App& train);

// After parsing: whether --print-config was given.
bool print_config_requested(const CLI::App& train);

// After parsing: the effective configuration of `train`'s options as JSON text (one key per
// line, in the order the flags were added).
std::string effective_config_json(CLI::App& train);

}  // namespace ember::cli
