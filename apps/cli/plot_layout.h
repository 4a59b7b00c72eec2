// apps/cli/plot_layout.h — where everything of an `ember plot` figure goes, in pixels.
//
// The layout is computed without cairo, so tests can check the data-to-pixel mapping
// itself; plot_render.cpp only draws what it says. The figure is a title band, a legend
// band (one entry per run in its colour, then a key of the line styles), and the panels in
// a grid of two columns (one when there is a single panel), each a frame with its axes.
// Every panel shares one x axis (the step or the epoch), so a moment of training lines up
// across panels.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "plot_axes.h"
#include "plot_data.h"

namespace ember::cli {

struct Rect {
  double x = 0, y = 0, width = 0, height = 0;
  double right() const { return x + width; }
  double bottom() const { return y + height; }
};

struct Colour {
  double red = 0, green = 0, blue = 0;
};

// The colour of run `index` (a ten-colour palette, repeating).
Colour run_colour(std::size_t index);

struct SeriesLayout {
  std::size_t run = 0;
  SeriesStyle style = SeriesStyle::Train;
  std::string label;
  std::vector<Point> pixels;  // the points in figure pixels, in x order
  bool markers = false;       // a dot per point (few points: epochs)
};

struct PanelLayout {
  std::string title, x_label, y_label;
  Rect frame;  // the plotting area; the axes' pixel ranges are its edges
  Axis x, y;
  std::vector<SeriesLayout> series;
};

struct LegendItem {
  double x = 0, y = 0;  // the left end of its sample line, on the text's middle line
  bool is_run = true;   // a run (colour) or a line style (grey)
  std::size_t run = 0;
  SeriesStyle style = SeriesStyle::Train;
  std::string text;
};

struct FigureLayout {
  double width = 0, height = 0;
  std::string title;
  std::vector<LegendItem> legend;
  std::vector<PanelLayout> panels;
};

// Lengths the layout and the renderer share.
constexpr double kLegendSampleLength = 28;   // the sample line before a legend entry's text
constexpr double kMarkerLimit = 60;          // series with at most this many points get markers

FigureLayout layout_figure(const FigureData& figure, double width = 1200);

}  // namespace ember::cli
