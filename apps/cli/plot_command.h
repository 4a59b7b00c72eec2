// apps/cli/plot_command.h — `ember plot LOG.jsonl [LOG ...] -o curves.svg|png`: the curves of
// one or more training runs (their --log files), overlaid, one colour per run.
#pragma once

#include <string>
#include <vector>

namespace ember::cli {

struct PlotOptions {
  std::vector<std::string> log_paths;  // one run each, named by its file stem in the legend
  std::string output_path;             // .svg or .png
  bool log_loss = false;               // --log-loss: the loss on a logarithmic axis
  double width = 1200;                 // --width: pixels (PNG) or points (SVG)
};

// 0 on success; UsageError (exit 2) for an output that is neither .svg nor .png or that is
// one of the logs, IOError
// (exit 1) for a log that is missing or malformed (naming the file and line) or an output
// that cannot be written, NotImplementedError (exit 1) in a build without cairo.
int run_plot(const PlotOptions& options);

}  // namespace ember::cli
