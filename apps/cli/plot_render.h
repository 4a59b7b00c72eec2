// apps/cli/plot_render.h — draws an `ember plot` figure (plot_layout.h) with cairo.
//
// The output's format follows its extension: .svg (vector, cairo's SVG surface) or .png
// (cairo's image surface, one pixel per layout unit). cairo is optional at build time
// (cli_curves.cmake): without it render_figure throws NotImplementedError saying what to
// install.
#pragma once

#include <string>

#include "plot_layout.h"

namespace ember::cli {

enum class ImageFormat { Svg, Png };

// The format of `path` by its extension (case-insensitive), or UsageError naming it.
ImageFormat image_format_of(const std::string& path);

bool plotting_available();
std::string plotting_unavailable();

// Writes the figure to `path`. IOError when the file cannot be written.
void render_figure(const FigureLayout& layout, const std::string& path, ImageFormat format);

}  // namespace ember::cli
