// apps/cli/plot_command.cpp — `ember plot`: logs -> series (plot_data) -> pixels
// (plot_layout) -> an SVG or PNG file (plot_render).
#include "plot_command.h"

#include <iostream>

#include <ember/core/error.h>

#include "plot_data.h"
#include "plot_layout.h"
#include "plot_render.h"
#include "output_paths.h"
#include "usage_error.h"

namespace ember::cli {

int run_plot(const PlotOptions& options) {
  const ImageFormat format = image_format_of(options.output_path);  // a usage error comes first
  for (const std::string& log : options.log_paths) {  // the image would replace the log it shows
    if (same_file(log, options.output_path)) {
      throw UsageError(make_message("-o ", options.output_path, " is the log ", log, ": choose another output name"));
    }
  }
  if (!plotting_available()) throw NotImplementedError(plotting_unavailable());
  std::vector<RunLog> runs;
  for (const std::string& path : options.log_paths) runs.push_back(read_run_log(path));
  const FigureData figure = figure_data(runs, options.log_loss);
  const FigureLayout layout = layout_figure(figure, options.width);
  render_figure(layout, options.output_path, format);
  std::cout << "wrote " << options.output_path << " (" << runs.size() << " run" << (runs.size() == 1 ? "" : "s") << ", "
            << layout.panels.size() << " panel" << (layout.panels.size() == 1 ? "" : "s") << ")\n";
  return 0;
}

}  // namespace ember::cli
