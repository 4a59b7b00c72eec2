// apps/cli/plot_layout.cpp — the geometry of an `ember plot` figure (see plot_layout.h).
#include "plot_layout.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ember::cli {

namespace {

constexpr double kOuterMargin = 20;
constexpr double kTitleHeight = 44;
constexpr double kLegendRowHeight = 24;
constexpr double kPanelHeight = 360;
// Inside a panel's cell: room for the title above the frame, tick labels and the axis
// labels left of and below it.
constexpr double kFrameTop = 30, kFrameLeft = 78, kFrameRight = 18, kFrameBottom = 52;
// The legend's text is measured by the renderer; the layout uses a generous estimate of
// its width (13 px sans-serif: about 7.5 px a character) so entries never overlap.
constexpr double kLegendCharWidth = 7.5, kLegendGap = 26;

struct Range {
  double low = std::numeric_limits<double>::infinity();
  double high = -std::numeric_limits<double>::infinity();
  void add(double value) {
    low = std::min(low, value);
    high = std::max(high, value);
  }
  bool empty() const { return low > high; }
};

bool plottable(double y, bool log_y) { return std::isfinite(y) && (!log_y || y > 0); }

std::vector<LegendItem> layout_legend(const FigureData& figure, double width, double top, double* height) {
  std::vector<LegendItem> items;
  for (std::size_t run = 0; run < figure.run_names.size(); ++run) {
    items.push_back({0, 0, true, run, SeriesStyle::Train, figure.run_names[run]});
  }
  // A key of the styles that appear: which line is train, validation, per step.
  bool used[3] = {false, false, false};
  for (const PanelData& panel : figure.panels) {
    for (const Series& series : panel.series) used[static_cast<int>(series.style)] = true;
  }
  const std::pair<SeriesStyle, const char*> keys[] = {{SeriesStyle::Train, "train"},
                                                      {SeriesStyle::Validation, "validation"},
                                                      {SeriesStyle::PerStep, "per step"}};
  for (const auto& [style, text] : keys) {
    if (used[static_cast<int>(style)]) items.push_back({0, 0, false, 0, style, text});
  }
  double x = kOuterMargin, y = top + kLegendRowHeight / 2;
  for (LegendItem& item : items) {
    const double item_width = kLegendSampleLength + 6 + kLegendCharWidth * static_cast<double>(item.text.size());
    if (x > kOuterMargin && x + item_width > width - kOuterMargin) {  // wrap to a new row
      x = kOuterMargin;
      y += kLegendRowHeight;
    }
    item.x = x;
    item.y = y;
    x += item_width + kLegendGap;
  }
  *height = items.empty() ? 0 : y - top + kLegendRowHeight / 2;
  return items;
}

}  // namespace

Colour run_colour(std::size_t index) {
  // Colour-blind-safe and distinct on white (the "tableau 10" hues).
  static const Colour palette[] = {{0.122, 0.467, 0.706}, {1.000, 0.498, 0.055}, {0.173, 0.627, 0.173},
                                   {0.839, 0.153, 0.157}, {0.580, 0.404, 0.741}, {0.549, 0.337, 0.294},
                                   {0.890, 0.467, 0.761}, {0.498, 0.498, 0.498}, {0.737, 0.741, 0.133},
                                   {0.090, 0.745, 0.812}};
  return palette[index % (sizeof palette / sizeof palette[0])];
}

FigureLayout layout_figure(const FigureData& figure, double width) {
  FigureLayout layout;
  layout.width = width;
  layout.title = "ember training curves";
  double legend_height = 0;
  const double legend_top = kOuterMargin + kTitleHeight;
  layout.legend = layout_legend(figure, width, legend_top, &legend_height);
  const double panels_top = legend_top + legend_height + 10;

  // One x axis for every panel.
  Range x_range;
  for (const PanelData& panel : figure.panels) {
    for (const Series& series : panel.series) {
      for (const Point& point : series.points) {
        if (plottable(point.y, panel.log_y)) x_range.add(point.x);
      }
    }
  }
  const bool by_step = figure.x_kind == XAxisKind::Step;
  if (x_range.empty()) x_range = Range{0, 1};
  // Steps start at 0 (before training), epochs at 0 too: the axis shows the whole run.
  // The x axis ends at the last point (ticks stop before it): no empty band after the run.
  Axis x_template = nice_axis(std::min(0.0, x_range.low), x_range.high, false, /*integer=*/true);
  if (x_range.high > x_template.low) {
    x_template.high = x_range.high;
    std::erase_if(x_template.ticks, [&](double tick) { return tick > x_range.high; });
  }

  const std::size_t columns = figure.panels.size() > 1 ? 2 : 1;
  const double cell_width = (width - 2 * kOuterMargin) / static_cast<double>(columns);
  for (std::size_t index = 0; index < figure.panels.size(); ++index) {
    const PanelData& data = figure.panels[index];
    PanelLayout panel;
    panel.title = data.title;
    panel.y_label = data.y_label;
    panel.x_label = by_step ? "step" : "epoch";
    const double cell_x = kOuterMargin + cell_width * static_cast<double>(index % columns);
    const double cell_y = panels_top + kPanelHeight * static_cast<double>(index / columns);
    panel.frame = {cell_x + kFrameLeft, cell_y + kFrameTop, cell_width - kFrameLeft - kFrameRight,
                   kPanelHeight - kFrameTop - kFrameBottom};

    Range y_range;
    for (const Series& series : data.series) {
      for (const Point& point : series.points) {
        if (plottable(point.y, data.log_y)) y_range.add(point.y);
      }
    }
    if (y_range.empty()) y_range = data.log_y ? Range{1, 10} : Range{0, 1};
    panel.y = nice_axis(y_range.low, y_range.high, data.log_y);
    panel.y.pixel_low = panel.frame.bottom();
    panel.y.pixel_high = panel.frame.y;
    panel.x = x_template;
    panel.x.pixel_low = panel.frame.x;
    panel.x.pixel_high = panel.frame.right();

    for (const Series& series : data.series) {
      SeriesLayout drawn{series.run, series.style, series.label, {}, false};
      for (const Point& point : series.points) {
        if (!plottable(point.y, data.log_y)) continue;
        drawn.pixels.push_back({panel.x.to_pixel(point.x), panel.y.to_pixel(point.y)});
      }
      drawn.markers = series.style != SeriesStyle::PerStep && static_cast<double>(drawn.pixels.size()) <= kMarkerLimit;
      if (!drawn.pixels.empty()) panel.series.push_back(std::move(drawn));
    }
    layout.panels.push_back(std::move(panel));
  }
  const std::size_t rows = (figure.panels.size() + columns - 1) / columns;
  layout.height = panels_top + kPanelHeight * static_cast<double>(rows) + kOuterMargin / 2;
  return layout;
}

}  // namespace ember::cli
